"""The Paddle sweep's throughput: seconds per Paddle op type for the full check set, run as
the sweep runs it (`opkit test OPS --backend paddle`, the fork pool, every check, default
fuzz), over the op types opkit and Paddle share (opkit_paddle.backend.overlap).

    python benchmarks/paddle_op_seconds.py [--sample N] [--jobs J] [--seed S] [--tree DIR]
                                           [--json FILE] [OP ...]

Each op type's seconds are the sum of its tasks' own run times, as `opkit test
--record-durations` writes them (one op type's work, whatever else the pool runs beside
it). Prints, per op type, its seconds and verdict, then the median and the 90th percentile
over the op types, the wall time of the whole run and the op types per hour it makes, with
the load average before and after (a figure for docs/performance.md is taken on a quiet
machine, load under 0.3). `--sample N`: N op types spread evenly over the sorted overlap
(a quick figure; the full overlap is the sweep's). Needs paddlepaddle.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear between the closest ranks (numpy's default)."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def sample(ops: list[str], n: int) -> list[str]:
    """n op types spread evenly over `ops` (all of them when n >= len(ops))."""
    if n <= 0 or n >= len(ops):
        return list(ops)
    step = len(ops) / n
    return [ops[int(i * step)] for i in range(n)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", help="these op types (default: the overlap)")
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="N op types spread over the overlap (default: all)")
    parser.add_argument("--jobs", type=int, default=0, help="opkit test --jobs (0: automatic)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--tree", default=str(ROOT),
                        help="run this checkout's opkit (default: this one; another tree to "
                             "compare its figures and verdicts)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures here (with "
                        "opkit test's JSON report: the verdicts to compare across trees)")
    args = parser.parse_args(argv)
    from opkit_paddle.backend import env as paddle_env

    why = paddle_env.missing()
    if why:
        print(why, file=sys.stderr)
        return 2
    from opkit_paddle.backend.overlap import overlap_ops

    ops = args.ops or sample(overlap_ops(), args.sample)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONPATH=str(Path(args.tree).resolve()))
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        durations = Path(tmp) / "durations.json"
        cmd = [sys.executable, "-c", "import sys; from opkit.cli.main import main; "
               "sys.exit(main())", "test", *ops, "--backend", "paddle", "--format", "json",
               "--seed", str(args.seed), "--jobs", str(args.jobs), "--record-durations",
               "--durations", str(durations)]
        started = time.perf_counter()
        p = subprocess.run(cmd, cwd=args.tree, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if p.returncode not in (0, 1) or not durations.exists():
            print(p.stderr[-2000:], file=sys.stderr)
            print(f"paddle_op_seconds: opkit test exited {p.returncode}", file=sys.stderr)
            return 2
        seconds = json.loads(durations.read_text())["durations"]
    verdicts = {r["op"]: r["status"] for r in json.loads(p.stdout)["ops"]}
    load_after = os.getloadavg()[0]
    print(f"{'op':<28}{'seconds':>10}  verdict")
    for op in sorted(seconds, key=seconds.get, reverse=True):
        print(f"{op:<28}{seconds[op]:>10.2f}  {verdicts.get(op, '?')}")
    values = list(seconds.values())
    med, p90 = statistics.median(values), percentile(values, 90)
    print(f"{len(values)} Paddle op types: MEDIAN {med:.2f} s, P90 {p90:.2f} s per op type "
          f"(sum of its tasks); wall {wall:.1f} s with --jobs {args.jobs or 'auto'} = "
          f"{3600 * len(values) / wall:.0f} op types per hour; load {load_before:.2f} -> "
          f"{load_after:.2f} on {os.cpu_count()} CPUs")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "seconds": seconds, "verdicts": verdicts, "median": med, "p90": p90,
            "wall": wall, "jobs": args.jobs, "load": [load_before, load_after],
            "seed": args.seed, "report": json.loads(p.stdout)}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
