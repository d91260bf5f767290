"""The Paddle backend's cost per case: forward+backward through the backend
(harness.backend.seam.run_forward_backward on a PaddlePreparedOp) against the same one-op program
(forward op + Paddle's grad ops) run directly with Paddle's executor, one run fetching the
outputs and the input gradients.

    python benchmarks/paddle_backend.py [--repeat N] [--block K] [--processes P] [--cpu]
                                         [--json FILE] [OP ...]

`--processes P` (default 3): the whole measurement in P fresh processes one after the other,
each op's ratio the median over them (the figure moves by a few percent from one process to
the next); 1: in this process only.

`--cpu`: CPU time of the process instead of wall time (a loaded machine's figure; the budget
is in wall time on a quiet one).

The protocol (`median_us`): per op, 20 warm calls of each side, then rounds of K calls
(default 10) of one side and K of the other, the side that goes first alternating, the
garbage collector off while timing; N calls per side in all (default 1000). Prints, per op,
the median microseconds per call of each and the median of the rounds' ratios, then the
worst ratio and its op on a line of its own (with the load average, before and after, and
the seconds the run took: a budget holds on a quiet machine, load under 0.3;
docs/performance.md); `--json FILE` also writes them. Exits 1 when the worst ratio is above
the budget (1.25x). The backend runs the forward op and its grad ops in one run
(PaddlePreparedOp.forward_backward), as the direct side does. Needs paddlepaddle
(pip install 'opkit-dl[paddle]').
"""
from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

BUDGET = 1.25
OPS = ["relu", "softmax", "elementwise_add", "mul", "reduce_sum", "transpose2", "conv2d",
       "pool2d", "concat", "tanh"]


@functools.cache
def _discovered() -> dict:
    """The built-in OpTests by op type (discovered once per run, not once per op)."""
    from harness.selecting.discovery import builtin_test_paths, discover

    return discover(builtin_test_paths(), seed=2024).by_op()


def first_case(op: str):
    """The first OpTest case of a built-in op (its float inputs, attrs, grad inputs)."""
    from harness.backend.case import case_from_test
    from harness.selecting.discovery import instantiate

    found = _discovered().get(op, [])
    for t in found:
        test = instantiate(t.cls, 2024)
        case = case_from_test(test)
        if not case.grad_inputs:
            from harness.backend.case import normalize_slots

            case.grad_inputs = [s.name for ss in normalize_slots(case.inputs).values()
                                for s in ss if isinstance(s.data, np.ndarray) and
                                s.data.dtype.kind == "f"]
        return case
    return None


CLOCK = time.perf_counter      # --cpu: time.process_time
BLOCK = 10                     # calls per side per round
WARM = 20                      # calls per side before timing


def median_us(a, b, repeat: int, block: int = BLOCK) -> tuple[float, float, float]:
    """(median microseconds per call of `a`, of `b`, median of the per-round ratios b / a).

    The protocol: WARM calls of each first (program cache, interpreter, allocations); then
    rounds of `block` calls of one side then `block` of the other, the side that goes
    first alternating from round to round (a drift of the machine, a cache warmed by the
    previous call, slows both alike), with the garbage collector off while timing (one
    `gc.collect()` before: a collection of the other side's garbage is not charged to this
    one). `repeat` calls per side in all (at least 3 rounds). The ratio is the median of the
    rounds' ratios, each of two adjacent blocks: a slow spell hits one round, not the median."""
    for _ in range(WARM):
        a(), b()
    rounds = max(3, repeat // block)
    ta, tb, ratios = [], [], []
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            first, second = (a, b) if r % 2 == 0 else (b, a)
            t0 = CLOCK()
            for _ in range(block):
                first()
            t1 = CLOCK()
            for _ in range(block):
                second()
            t2 = CLOCK()
            da, db = (t1 - t0, t2 - t1) if r % 2 == 0 else (t2 - t1, t1 - t0)
            ta.append(da / block)
            tb.append(db / block)
            ratios.append(db / da if da > 0 else float("inf"))
    finally:
        if enabled:
            gc.enable()
    return statistics.median(ta) * 1e6, statistics.median(tb) * 1e6, statistics.median(ratios)


def bench(op: str, repeat: int, block: int = BLOCK):
    from harness.backend.seam import Combo, prepare, run_forward_backward

    case = first_case(op)
    if case is None:
        return None
    p = prepare(case, Combo("CPU", "float64"))
    run_forward_backward(p, case)
    cot_names = p._grad_program(frozenset(case.no_grad_set or ()))[2]
    wrt = [n for n in case.grad_inputs]
    outs = p.output_names()
    cot = {g: (np.ones_like(p.array(g[:-5])), None) for g in cot_names}
    full, feed_names = p.direct_program(frozenset(case.no_grad_set or ()))
    feed = p._feed(cot)
    feed = {k: v for k, v in feed.items() if k in feed_names}
    fetch = outs + [w + "@GRAD" for w in wrt]
    exe = p.exe

    def direct():
        exe.run(full, feed=feed, fetch_list=fetch, scope=p.scope, return_numpy=False)

    def backend():
        run_forward_backward(p, case)

    return median_us(direct, backend, repeat, block)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ops", nargs="*", default=OPS)
    parser.add_argument("--repeat", type=int, default=1000, help="timed calls per side and "
                        "op (default 1000), in rounds of --block calls")
    parser.add_argument("--block", type=int, default=BLOCK, help="calls per side per round "
                        f"(default {BLOCK})")
    parser.add_argument("--cpu", action="store_true", help="time CPU time of the process "
                        "(time.process_time) instead of wall time: for a loaded machine")
    parser.add_argument("--json", type=Path, help="also write the figures here (per-op "
                        "ratios, the worst, the load) as JSON")
    parser.add_argument("--processes", type=int, default=3, help="run the measurement in "
                        "this many fresh processes one after the other and take each op's "
                        "median over them (default 3; 1: in this process)")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.block < 1 or args.processes < 1:
        parser.error("--repeat, --block and --processes must be at least 1")
    if args.processes > 1:
        return _over_processes(args)
    global CLOCK
    CLOCK = time.process_time if args.cpu else time.perf_counter
    from opkit_paddle.backend import env as paddle_env
    from harness.options import Options, use

    why = paddle_env.missing()
    if why:
        print(why, file=sys.stderr)
        return 2
    use(Options(backend="paddle"))
    worst, worst_op = 0.0, ""
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    rows = []
    print(f"{'op':<18}{'direct us':>12}{'backend us':>12}{'ratio':>8}")
    for op in args.ops:
        got = bench(op, args.repeat, args.block)
        if got is None:
            print(f"{op:<18}  (no OpTest)")
            continue
        d, b, ratio = got
        rows.append({"op": op, "direct_us": round(d, 1), "backend_us": round(b, 1),
                     "ratio": round(ratio, 3)})
        if ratio > worst:
            worst, worst_op = ratio, op
        print(f"{op:<18}{d:>12.0f}{b:>12.0f}{ratio:>8.2f}")
    load_after = os.getloadavg()[0]
    load = f"load {load_before:.2f} -> {load_after:.2f}"
    seconds = time.perf_counter() - started
    print(f"WORST RATIO {worst:.2f} ({worst_op}; budget {BUDGET}; {load}; repeat "
          f"{args.repeat} in blocks of {args.block}; {seconds:.0f} s"
          f"{'; CPU time' if args.cpu else ''})")
    if args.json:
        args.json.write_text(json.dumps({
            "rows": rows, "worst_ratio": round(worst, 3), "worst_op": worst_op,
            "budget": BUDGET, "load_before": load_before, "load_after": load_after,
            "repeat": args.repeat, "block": args.block, "clock": "cpu" if args.cpu else "wall",
            "seconds": round(seconds, 1)}, indent=1))
    return 0 if worst <= BUDGET else 1


def _over_processes(args) -> int:
    """The measurement in `args.processes` fresh processes, one after the other: each op's
    ratio is the median over the processes (a process's memory layout moves a ratio by a few
    percent from one process to the next, which no number of rounds inside it averages out)."""
    import subprocess
    import tempfile

    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.processes):
            out = Path(tmp) / f"{k}.json"
            cmd = [sys.executable, __file__, *args.ops, "--repeat", str(args.repeat),
                   "--block", str(args.block), "--processes", "1", "--json", str(out)]
            if args.cpu:
                cmd.append("--cpu")
            p = subprocess.run(cmd, capture_output=True, text=True)
            if not out.exists():
                sys.stderr.write(p.stdout + p.stderr)
                return p.returncode or 2
            runs.append(json.loads(out.read_text()))
    ops = [r["op"] for r in runs[0]["rows"]]
    rows = []
    print(f"{'op':<18}{'direct us':>12}{'backend us':>12}{'ratio':>8}   per process")
    for op in ops:
        got = [next(r for r in run["rows"] if r["op"] == op) for run in runs]
        row = {"op": op, "direct_us": statistics.median(g["direct_us"] for g in got),
               "backend_us": statistics.median(g["backend_us"] for g in got),
               "ratio": round(statistics.median(g["ratio"] for g in got), 3),
               "ratios": [g["ratio"] for g in got]}
        rows.append(row)
        print(f"{op:<18}{row['direct_us']:>12.0f}{row['backend_us']:>12.0f}"
              f"{row['ratio']:>8.2f}   {' '.join(f'{x:.2f}' for x in row['ratios'])}")
    worst = max(rows, key=lambda r: r["ratio"]) if rows else {"op": "", "ratio": 0.0}
    load_after = os.getloadavg()[0]
    seconds = time.perf_counter() - started
    print(f"WORST RATIO {worst['ratio']:.2f} ({worst['op']}; budget {BUDGET}; load "
          f"{load_before:.2f} -> {load_after:.2f}; median of {args.processes} processes, each "
          f"repeat {args.repeat} in blocks of {args.block}; {seconds:.0f} s"
          f"{'; CPU time' if args.cpu else ''})")
    if args.json:
        args.json.write_text(json.dumps({
            "rows": rows, "worst_ratio": worst["ratio"], "worst_op": worst["op"],
            "budget": BUDGET, "load_before": load_before, "load_after": load_after,
            "repeat": args.repeat, "block": args.block, "processes": args.processes,
            "clock": "cpu" if args.cpu else "wall", "seconds": round(seconds, 1)}, indent=1))
    return 0 if worst["ratio"] <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
