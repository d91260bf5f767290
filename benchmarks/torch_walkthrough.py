"""Times docs/torch.md's walkthrough "Ten minutes: from a fresh venv to a checked custom op",
step by step, in a fresh temporary venv, as a newcomer would run it:

    python benchmarks/torch_walkthrough.py [--torch SPEC] [--python PY] [--keep DIR]

1. `python -m venv venv`;
2. torch's CPU build first: `pip install SPEC` (default `torch --index-url
   https://download.pytorch.org/whl/cpu`; a local wheel or `torch==2.13.0` where pip's
   configuration finds one);
3. opkit with the extra: `pip install -e "./opkit[torch]"` in a copy of this repository's
   tracked files (a clone: the repository itself is never written);
4. the walkthrough's two files, `mylib_ops.py` and `my_tests/test_scaled_softplus.py`,
   taken from docs/torch.md's code blocks as they are;
5. `opkit test mylib::scaled_softplus --backend torch --ops mylib_ops.py --tests my_tests`
   (must exit 0).

Prints each step's wall time and CPU time (its processes' user + system), the total, and the
load average before and after: the machine may be shared, so say the load with the figures.
`--venv DIR` reuses a venv made by an earlier run (`--keep`) and times step 5 alone.
Exits 1 when a step fails (its output's tail is printed).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "torch.md"
DEFAULT_TORCH = "torch --index-url https://download.pytorch.org/whl/cpu"
FILES = ("mylib_ops.py", "my_tests/test_scaled_softplus.py")
CHECK = ["mylib::scaled_softplus", "--backend", "torch", "--ops", "mylib_ops.py",
         "--tests", "my_tests"]


def walkthrough_files(doc: Path = DOC) -> dict:
    """{relative path: text} of the walkthrough's files: the ```python blocks of the doc
    whose first line is `# PATH...`."""
    found = {}
    for block in re.findall(r"```python\n(.*?)```", doc.read_text(), re.S):
        first = block.splitlines()[0] if block.strip() else ""
        for path in FILES:
            if first.startswith(f"# {path}"):
                found[path] = block
    missing = [p for p in FILES if p not in found]
    if missing:
        raise SystemExit(f"{doc}: no code block starting with '# {missing[0]}'")
    return found


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def step(rows: list, name: str, cmd: list, cwd: Path, env: dict) -> None:
    """Run `cmd`, record (name, command, wall s, cpu s); exit 1 naming it when it fails."""
    wall, cpu = time.perf_counter(), _children_cpu()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    rows.append((name, shlex.join(str(c) for c in cmd), time.perf_counter() - wall,
                 _children_cpu() - cpu, p.stdout))
    print(f"{name}: {rows[-1][2]:.1f} s wall, {rows[-1][3]:.1f} s CPU", flush=True)
    if p.returncode != 0:
        print(f"step '{name}' failed (exit {p.returncode}): {shlex.join(map(str, cmd))}\n"
              f"{(p.stdout + p.stderr)[-3000:]}", file=sys.stderr)
        raise SystemExit(1)


def _clone(dest: Path) -> None:
    """This repository's tracked files (as in a clone) copied to `dest`."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--torch", default=DEFAULT_TORCH,
                    help=f"what step 2 gives pip install (default: {DEFAULT_TORCH!r})")
    ap.add_argument("--python", default=sys.executable, help="the python that makes the venv")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a "
                    "temporary folder, removed)")
    ap.add_argument("--venv", metavar="DIR", help="a venv of an earlier --keep run: time "
                    "step 5 only")
    a = ap.parse_args(argv)
    files = walkthrough_files()
    work = Path(a.keep or tempfile.mkdtemp(prefix="opkit-walkthrough-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    rows, load0 = [], os.getloadavg()[0]
    try:
        venv = Path(a.venv).resolve() if a.venv else work / "venv"
        bin_ = venv / "bin"
        env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(venv)
        if not a.venv:
            step(rows, "1. a venv", [a.python, "-m", "venv", str(venv)], work, env)
            step(rows, "2. torch, the CPU build first",
                 [str(bin_ / "pip"), "install", *shlex.split(a.torch)], work, env)
            (work / "opkit").mkdir(exist_ok=True)
            _clone(work / "opkit")
            step(rows, "3. opkit with the extra",
                 [str(bin_ / "pip"), "install", "-e", "./opkit[torch]"], work, env)
        for path, text in files.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        step(rows, "5. check it", [str(bin_ / "opkit"), "test", *CHECK], work, env)
        summary = rows[-1][4].strip().splitlines()
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    load1 = os.getloadavg()[0]
    print(f"\n{'step':32} {'wall s':>8} {'CPU s':>8}")
    for name, _cmd, wall, cpu, _out in rows:
        print(f"{name:32} {wall:8.1f} {cpu:8.1f}")
    print(f"{'total':32} {sum(r[2] for r in rows):8.1f} {sum(r[3] for r in rows):8.1f}")
    print(f"opkit test: {summary[0] if summary else '(no output)'}")
    print(f"load average {load0:.1f} before, {load1:.1f} after, {os.cpu_count()} CPUs; "
          f"python {a.python}; torch from: {a.torch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
