"""The Paddle backend's cost per case: forward+backward through the backend
(harness.backend.seam.run_forward_backward on a PaddlePreparedOp) against the same one-op program
(forward op + Paddle's grad ops) run directly with Paddle's executor, one run fetching the
outputs and the input gradients.

    python benchmarks/paddle_backend.py [--repeat N] [--cpu] [OP ...]

`--cpu`: CPU time of the process instead of wall time (a loaded machine's figure; the budget
is in wall time on a quiet one).

Prints, per op, the median microseconds of each and their ratio, then the worst ratio and
its op on a line of its own (with the load average, before and after: a budget holds on a
quiet machine, load under 0.3; docs/performance.md); exits 1 when the worst ratio is above
the budget (1.25x). The backend runs the forward op and its grad ops in one run
(PaddlePreparedOp.forward_backward), as the direct side does. Needs paddlepaddle
(pip install 'opkit-dl[paddle]').
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

BUDGET = 1.25
OPS = ["relu", "softmax", "elementwise_add", "mul", "reduce_sum", "transpose2", "conv2d",
       "pool2d", "concat", "tanh"]


def first_case(op: str):
    """The first OpTest case of a built-in op (its float inputs, attrs, grad inputs)."""
    from harness.backend.case import case_from_test
    from harness.selecting.discovery import builtin_test_paths, discover, instantiate

    found = discover(builtin_test_paths(), seed=2024).by_op().get(op, [])
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


def median_us(a, b, repeat: int) -> tuple[float, float]:
    """Median microseconds of `a` and of `b`, timed alternately (a shared, busy machine
    slows both alike)."""
    a(), b()                                    # warm (program cache, allocations)
    ta, tb = [], []
    for _ in range(repeat):
        t0 = CLOCK()
        a()
        t1 = CLOCK()
        b()
        t2 = CLOCK()
        ta.append(t1 - t0)
        tb.append(t2 - t1)
    return statistics.median(ta) * 1e6, statistics.median(tb) * 1e6


def bench(op: str, repeat: int):
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

    return median_us(direct, backend, repeat)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ops", nargs="*", default=OPS)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--cpu", action="store_true", help="time CPU time of the process "
                        "(time.process_time) instead of wall time: for a loaded machine")
    args = parser.parse_args(argv)
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
    print(f"{'op':<18}{'direct us':>12}{'backend us':>12}{'ratio':>8}")
    for op in args.ops:
        got = bench(op, args.repeat)
        if got is None:
            print(f"{op:<18}  (no OpTest)")
            continue
        d, b = got
        if b / d > worst:
            worst, worst_op = b / d, op
        print(f"{op:<18}{d:>12.0f}{b:>12.0f}{b / d:>8.2f}")
    load = f"load {load_before:.2f} -> {os.getloadavg()[0]:.2f}"
    print(f"WORST RATIO {worst:.2f} ({worst_op}; budget {BUDGET}; {load}; repeat "
          f"{args.repeat}{'; CPU time' if args.cpu else ''})")
    return 0 if worst <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
