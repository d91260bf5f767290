"""How fast is `opkit lint` on Paddle's C++ operators? (figures: docs/performance.md)

    python benchmarks/cpp_lint_speed.py --tree /path/to/Paddle-v2.0.0/paddle/fluid/operators
        [--repeat 3] [--file relu_op.cc]

The tree is copied to a temporary folder (so that its cache starts empty and nothing is written
next to the sources). Measured, as wall times of the `opkit lint` command (process start
included), medians over --repeat runs, with the default workers:
  * cold: no cache (the cache folder deleted before each run),
  * warm: the cache filled by the run before, nothing changed,
  * one file: `opkit lint --no-cache FILE` (cold; --file, relative to --tree).
The load average is printed before and after: other processes share the machine.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _opkit() -> list:
    exe = Path(sys.executable).with_name("opkit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "opkit"]


CPU: dict = {}  # args -> CPU seconds (user + system) of each run


def _timed(label, args, cwd) -> tuple:
    """Wall seconds and the process; the run's CPU seconds (children included) go to CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([*_opkit(), "lint", *args], cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(label, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, proc


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main(argv=None) -> int:
    from checkers.lint.cpp import is_cpp

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", required=True, help="a paddle/fluid/operators folder")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--file", default="activation_op.cc")
    args = parser.parse_args(argv)
    tree = Path(args.tree)
    if not tree.is_dir():
        print(f"cpp_lint_speed: {tree}: not a folder", file=sys.stderr)
        return 2
    files = [p for p in tree.rglob("*") if p.is_file() and is_cpp(p.name)]
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"{len(files)} C++ files, {lines} lines; {os.cpu_count()} CPUs; load before: {_load()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "operators"
        shutil.copytree(tree, work)
        (Path(tmp) / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
        cold, warm, one = [], [], []
        for _ in range(args.repeat):
            shutil.rmtree(Path(tmp) / ".opkit_cache", ignore_errors=True)
            seconds, proc = _timed("cold", ["--format", "json", "operators"], tmp)
            if proc.returncode not in (0, 1):
                print(proc.stderr, file=sys.stderr)
                return 1
            cold.append(seconds)
            report = json.loads(proc.stdout)
            seconds, _ = _timed("warm", ["--format", "json", "operators"], tmp)
            warm.append(seconds)
            seconds, _ = _timed("one", ["--no-cache", f"operators/{args.file}"], tmp)
            one.append(seconds)
    cold_m, warm_m, one_m = (statistics.median(x) for x in (cold, warm, one))
    by_rule = Counter(f["rule"] for f in report)
    crashes = [f for f in report if "internal error" in f["message"]]
    print(f"findings: {len(report)} {dict(sorted(by_rule.items()))}")
    print(f"internal errors (crashes): {len(crashes)}")
    for f in report:
        if f["rule"] == "OPK000":
            print(f"  unparseable: {f['path']}:{f['line']}: {f['message']}")
    print(f"cold (no cache, default workers): median {cold_m:.2f} s  runs {[round(x, 2) for x in cold]}")
    print(f"warm (cache): median {warm_m:.2f} s = {warm_m / cold_m:.1%} of cold  runs {[round(x, 2) for x in warm]}")
    print(f"one file ({args.file}, --no-cache): median {one_m:.3f} s  runs {[round(x, 3) for x in one]}")
    cpu = {k: statistics.median(v) for k, v in CPU.items()}
    print(f"CPU seconds (user+system, all processes), medians: cold {cpu['cold']:.2f}, "
          f"warm {cpu['warm']:.2f}, one file {cpu['one']:.3f}")
    print(f"load after: {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
