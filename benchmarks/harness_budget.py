"""`opkit test --all` now against a base commit, back to back: the release-over-release
budget (issue 49) in CPU time, and the wall time.

The "before" tree is `--base`: by default the last release, i.e. the newest tag reachable
from HEAD, else the commit noted in docs/performance.md on a line `Release base: <commit>`
(issue 27's baseline was 992903a), unpacked with `git archive` into a temporary folder and run with PYTHONPATH pointing at it;
the "after" tree is this checkout. With `--installed`, each tree is instead installed
non-editable (`pip install --no-deps TREE`) into a venv of its own that sees this
interpreter's packages (numpy, hypothesis, ...), and run from a folder outside both trees. Both run the same command line (default options unless given after
`--`), alternating, `--repeat` times each; the figure is the ratio of the medians.
Target: after / before <= 2.5.

    python benchmarks/harness_budget.py [--repeat 3] [--base COMMIT] [--same-ops] [--installed]
                                        [-- extra opkit args]

Threads are pinned to 1 (OMP/OpenBLAS/MKL). The quiet-machine protocol (docs/performance.md,
"Release over release"): load average under 0.3 at the start; the load is printed at the
start and at the end, and a warning when it was above 0.3. The last line is the headline:
`CPU RATIO after/before`.
It also prints the CPU time (user + system of every process of the run) of both sides: the
work done, which a loaded machine moves less than the wall time.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUIET_LOAD = 0.3
MAIN = "import sys; from opkit.cli.main import main; sys.exit(main())"


def default_base() -> str:
    """The last release: the newest tag reachable from HEAD, else the commit noted in
    docs/performance.md (`Release base: <commit>`, the last line that says so)."""
    p = subprocess.run(["git", "-C", str(ROOT), "describe", "--tags", "--abbrev=0"],
                       capture_output=True, text=True)
    if p.returncode == 0 and p.stdout.strip():
        return p.stdout.strip()
    noted = re.findall(r"^Release base: `?([0-9a-f]{7,40})`?", (ROOT / "docs" /
                       "performance.md").read_text(), re.M)
    if not noted:
        sys.exit("harness_budget: no tag and no `Release base: <commit>` line in "
                 "docs/performance.md: give --base")
    return noted[-1]


def unpack(commit: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def install(tree: Path, venv: Path) -> str:
    """A venv (seeing this interpreter's packages) with `tree` installed non-editable; its
    python."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(tree)], check=True,
                   capture_output=True)
    return python


def run_once(tree: Path, args: list[str], ops=None, python=None,
             cwd=None) -> tuple[float, int, list[str], float]:
    """(wall seconds, exit status, the ops it reported, CPU seconds of the whole process
    tree: user + system of the command and every process it waited for). `ops`: test these ops by name
    instead of `--all` (the base's op set, on a tree that has more ops). `python`: an
    interpreter with the tree installed (else the tree goes on PYTHONPATH)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    if python is None:
        env["PYTHONPATH"] = str(tree)
    what = list(ops) if ops else ["--all"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([python or sys.executable, "-c", MAIN, "test", *what, *args],
                       cwd=cwd or tree, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    reported = [m.group(1) for m in re.finditer(r"^(\w+): (PASS|FAIL|SKIP)", p.stdout, re.M)]
    return took, p.returncode, reported, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--base", default=None,
                        help="the commit to compare with (default: the last tag, else the "
                             "noted release base of docs/performance.md)")
    parser.add_argument("--installed", action="store_true",
                        help="install each tree non-editable into a venv of its own")
    parser.add_argument("--same-ops", action="store_true",
                        help="run the base's op set (the ops its --all reports, with an "
                             "OpTest) by name on this tree too, not this tree's --all")
    parser.add_argument("extra", nargs="*", help="extra `opkit test` arguments (after --)")
    args = parser.parse_args()
    args.base = args.base or default_base()
    load_start = os.getloadavg()[0]
    print(f"base {args.base}; load average at the start {load_start:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "before").mkdir()
        before_tree = unpack(args.base, Path(tmp) / "before")
        py_b = py_a = cwd = None
        if args.installed:
            py_b = install(before_tree, Path(tmp) / "venv-before")
            py_a = install(ROOT, Path(tmp) / "venv-after")
            cwd = Path(tmp) / "run"
            cwd.mkdir()
        before, after, cpu_b, cpu_a = [], [], [], []
        ops = None
        base_args = list(args.extra)
        if args.installed:   # the base's OpTests are not installed with it: its [tool.opkit]
            import tomllib   # tests, from its tree
            conf = tomllib.loads((before_tree / "pyproject.toml").read_text())
            for entry in conf.get("tool", {}).get("opkit", {}).get("tests", []):
                base_args += ["--tests", str(before_tree / entry)]
        for _ in range(args.repeat):
            t, rc_b, reported, c = run_once(before_tree, base_args, python=py_b, cwd=cwd)
            before.append(t)
            cpu_b.append(c)
            if args.same_ops and ops is None:
                ops = reported
            t, rc_a, _, c = run_once(ROOT, args.extra, ops, python=py_a, cwd=cwd)
            after.append(t)
            cpu_a.append(c)
            print(f"before {before[-1]:.1f} s (cpu {cpu_b[-1]:.1f} s, exit {rc_b})   after "
                  f"{after[-1]:.1f} s (cpu {cpu_a[-1]:.1f} s, exit {rc_a})" +
                  (f"   [{len(ops)} ops by name]" if ops else ""), flush=True)
    b, a = statistics.median(before), statistics.median(after)
    print(f"opkit test --all {' '.join(args.extra)}: before ({args.base}) median {b:.1f} s, "
          f"after median {a:.1f} s, ratio {a / b:.2f} (target <= 2.5; {args.repeat} repeats "
          f"each, alternating)")
    cb, ca = statistics.median(cpu_b), statistics.median(cpu_a)
    load_end = os.getloadavg()[0]
    print(f"CPU time (user + system, every process): before median {cb:.1f} s, after median "
          f"{ca:.1f} s, ratio {ca / cb:.2f}; load average at the end "
          f"{load_end:.1f} on {os.cpu_count()} CPUs")
    if max(load_start, load_end) > QUIET_LOAD:
        print(f"warning: not a quiet machine (load {load_start:.2f} -> {load_end:.2f}, the "
              f"protocol asks under {QUIET_LOAD}): record the figure as loaded")
    print(f"CPU RATIO {ca / cb:.2f} (after {ca:.1f} s / before {cb:.1f} s, base {args.base}, "
          f"{args.repeat} alternating repeats)")


if __name__ == "__main__":
    main()
