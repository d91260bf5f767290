"""How often `opkit bench --against` is wrong: the false-alarm rate on A/A runs (a commit
against itself) and the detection rate of a planted 20% slowdown.

    python benchmarks/bench_calibration.py --runs 50            # both, 50 runs each
    python benchmarks/bench_calibration.py --runs 5 --keep DIR  # keep the scratch project
    python benchmarks/bench_calibration.py --runs 50 --log runs.jsonl -- --max-rounds 10

Arguments after `--` go to every `opkit bench` call (e.g. `--rounds 20`, `--max-rounds 10`).
`--log FILE` appends one JSON line per run (its exit, ratio, interval, rounds used and
per-round ratios) as it finishes, so a run cut short still leaves its figures; `--summarize FILE` prints the summary of such a
log (with `single_look_exit_1`: what the earlier single 95% look after 10 rounds would have
said on each run's first 10 rounds).

A scratch project (a git repository in a temporary folder, as a user's would be) holds one
op, `probe`, whose kernel computes `tanh` REPS times over its input (so that the kernel, not
the framework, is what the time measures), and an OpTest for it. A/A: `opkit bench probe
--against HEAD` with the working tree equal to HEAD. Planted: the working tree's kernel
does 20% more work (REPS 10 -> 12) than HEAD's. Each run uses the default rounds and
threshold; the rates are runs that exit 1 over runs. The A/A and planted runs alternate
(aa, planted, aa, ...), so both see the same load and a run cut short has as many of each.
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


def bench(root: Path, extra: list[str]) -> tuple[int, dict]:
    proc = subprocess.run([sys.executable, "-m", "opkit", "bench", "probe", "--against",
                           "HEAD", "--format", "json", *extra], cwd=root,
                          capture_output=True, text=True)
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"opkit bench failed (exit {proc.returncode}): {proc.stderr}") from None
    return proc.returncode, data


def main() -> int:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--keep", metavar="DIR", help="make the scratch project here")
    parser.add_argument("--only", choices=["aa", "planted"])
    parser.add_argument("--planted-reps", type=int, default=12, metavar="N",
                        help="the planted kernel's tanh count (default 12: 20%% slower than "
                             "10; 11 plants a 10%% slowdown, nearer the 5%% threshold)")
    parser.add_argument("--log", metavar="FILE", help="append one JSON line per run")
    parser.add_argument("--summarize", metavar="FILE",
                        help="run nothing: summarize the runs a --log FILE holds")
    args = parser.parse_args(argv)
    if args.summarize:
        runs: dict[str, list[dict]] = {}
        with open(args.summarize) as f:
            for line in f:
                record = json.loads(line)
                runs.setdefault(record["kind"], []).append(record)
        print(json.dumps(summarize(runs), indent=1))
        return 0
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = "1"
    root = Path(args.keep or tempfile.mkdtemp(prefix="opkit-bench-cal-")) / "project"
    if root.exists():
        shutil.rmtree(root)
    make_project(root)
    labels = [(label, reps) for label, reps in (("aa", 10), ("planted", args.planted_reps))
              if not args.only or args.only == label]
    runs: dict[str, list[dict]] = {label: [] for label, _ in labels}
    for i in range(args.runs):
        for label, reps in labels:
            (root / "probe_op.py").write_text(OP.format(reps=reps))
            start = time.time()
            code, data = bench(root, extra)
            op = data["ops"][0]
            record = {"kind": label, "run": i + 1, "exit": code, "ratio": op["ratio"],
                      "low": op["low"], "high": op["high"], "rounds": op["rounds"],
                      "per_round": op.get("per_round"), "seconds": time.time() - start,
                      "load": os.getloadavg()[0], "time": time.strftime("%H:%M:%S")}
            runs[label].append(record)
            if args.log:
                with open(args.log, "a") as f:
                    f.write(json.dumps(record) + "\n")
            print(f"{label} run {i + 1}/{args.runs}: exit {code}, ratio {op['ratio']:.3f} "
                  f"[{op['low']:.3f}, {op['high']:.3f}], {op['rounds']} rounds, "
                  f"{record['seconds']:.0f} s, load {record['load']:.1f}", flush=True)
    print(json.dumps(summarize(runs), indent=1))
    if not args.keep:
        shutil.rmtree(root.parent, ignore_errors=True)
    return 0


def single_look(record: dict, rounds: int = 10, threshold: float = 0.05) -> bool:
    """What the earlier rule (one look, a 95% interval, after `rounds` rounds) says on the
    first `rounds` rounds of a logged run."""
    import math

    from opkit.cli.bench_timing import interval

    logs = [math.log(v) for v in record["per_round"][:rounds]]
    return interval(logs)[1] > 1 + threshold


def summarize(runs: dict[str, list[dict]], rounds: int = 10) -> dict:
    """Per kind: runs, exits 1, the rate, median ratio, rounds used, seconds; and
    `single_look_exit_1`: the runs the earlier single 95% look at `rounds` rounds would
    have flagged, on the same (first) rounds."""
    summary = {}
    for label, records in runs.items():
        if not records:
            continue
        ratios = sorted(r["ratio"] for r in records)
        used = sorted(r["rounds"] for r in records)
        flagged = sum(1 for r in records if r["exit"] == 1)
        summary[label] = {"runs": len(records), "exit_1": flagged,
                          "rate": flagged / len(records),
                          "median_ratio": ratios[len(ratios) // 2],
                          "mean_rounds": sum(used) / len(used),
                          "max_rounds_used": used[-1],
                          "seconds_per_run": sum(r["seconds"] for r in records) / len(records),
                          "single_look_exit_1": sum(single_look(r, rounds) for r in records
                                                    if r.get("per_round"))}
    return summary


if __name__ == "__main__":
    sys.exit(main())
