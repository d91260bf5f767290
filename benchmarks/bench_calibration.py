"""How often `opkit bench --against` is wrong: the false-alarm rate on A/A runs (a commit
against itself) and the detection rate of a planted 20% slowdown.

    python benchmarks/bench_calibration.py --runs 50            # both, 50 runs each
    python benchmarks/bench_calibration.py --runs 5 --keep DIR  # keep the scratch project

A scratch project (a git repository in a temporary folder, as a user's would be) holds one
op, `probe`, whose kernel computes `tanh` REPS times over its input (so that the kernel, not
the framework, is what the time measures), and an OpTest for it. A/A: `opkit bench probe
--against HEAD` with the working tree equal to HEAD. Planted: the working tree's kernel
does 20% more work (REPS 10 -> 12) than HEAD's. Each run uses the default rounds and
threshold; the rates are runs that exit 1 over runs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OP = '''import numpy as np
from opkit import (OpMaker, OperatorWithKernel, register_operator, register_kernel,
                   DefaultGradOpMaker, grad_var_name)

REPS = {reps}


class ProbeMaker(OpMaker):
    def make(self):
        self.add_input("X", "input")
        self.add_output("Out", "tanh applied REPS times")
        self.add_comment("probe: Out = tanh(X), computed REPS times")


class ProbeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class ProbeGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))


register_operator("probe", ProbeOp, ProbeMaker, grad_maker=DefaultGradOpMaker)
register_operator("probe_grad", ProbeGradOp)


@register_kernel("probe", dtypes=("float32", "float64"))
def probe(ctx):
    x = ctx.input("X")
    out = None
    for _ in range(REPS):
        out = np.tanh(x)
    ctx.set_output("Out", out)


@register_kernel("probe_grad", dtypes=("float32", "float64"))
def probe_grad(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    grad = None
    for _ in range(REPS):
        grad = dout * (1.0 - np.tanh(x) ** 2)
    ctx.set_output(grad_var_name("X"), grad)
'''

TEST = '''import numpy as np
from harness import OpTest


class TestProbe(OpTest):
    def setUp(self):
        self.op_type = "probe"
        x = np.random.uniform(-1, 1, (16, 32)).astype("float64")
        self.inputs = {"X": x}
        self.outputs = {"Out": np.tanh(x)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")
'''

PYPROJECT = '''[project]
name = "probe-ops"
version = "0"

[tool.opkit]
ops = ["probe_op.py"]
tests = ["test_probe.py"]
'''


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def make_project(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "probe_op.py").write_text(OP.format(reps=10))
    (root / "test_probe.py").write_text(TEST)
    git(root, "init", "-q")
    git(root, "-c", "user.email=a@b", "-c", "user.name=bench", "add", ".")
    git(root, "-c", "user.email=a@b", "-c", "user.name=bench", "commit", "-qm", "probe")


def bench(root: Path) -> tuple[int, dict]:
    proc = subprocess.run([sys.executable, "-m", "opkit", "bench", "probe", "--against",
                           "HEAD", "--format", "json"], cwd=root, capture_output=True,
                          text=True)
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"opkit bench failed (exit {proc.returncode}): {proc.stderr}") from None
    return proc.returncode, data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--keep", metavar="DIR", help="make the scratch project here")
    parser.add_argument("--only", choices=["aa", "planted"])
    args = parser.parse_args()
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = "1"
    root = Path(args.keep or tempfile.mkdtemp(prefix="opkit-bench-cal-")) / "project"
    if root.exists():
        shutil.rmtree(root)
    make_project(root)
    summary = {}
    for label, reps in (("aa", 10), ("planted", 12)):
        if args.only and args.only != label:
            continue
        (root / "probe_op.py").write_text(OP.format(reps=reps))
        exits, ratios, start = [], [], time.time()
        for i in range(args.runs):
            code, data = bench(root)
            exits.append(code)
            ratios.append(data["ops"][0]["ratio"])
            print(f"{label} run {i + 1}/{args.runs}: exit {code}, ratio "
                  f"{data['ops'][0]['ratio']:.3f} [{data['ops'][0]['low']:.3f}, "
                  f"{data['ops'][0]['high']:.3f}]", flush=True)
        flagged = sum(1 for c in exits if c == 1)
        summary[label] = {"runs": args.runs, "exit_1": flagged,
                          "rate": flagged / args.runs,
                          "median_ratio": sorted(ratios)[len(ratios) // 2],
                          "seconds_per_run": (time.time() - start) / args.runs}
    print(json.dumps(summary, indent=1))
    if not args.keep:
        shutil.rmtree(root.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
