"""Executor overhead: what running an op through a prepared program costs over numpy.

1. Per-op overhead: a program of K chained `elementwise_add` ops on 1-element float32
   tensors, run by one `Executor.run` (feed, K ops, fetch); the time per op is divided by the
   time of one `numpy.add` on the same arrays. Target: <= 5x. (Ratios are medians of
   per-round ratios.)
2. Large tensors: one `elementwise_add` of two 1000x1000 float32 tensors through the
   executor (feed, op, fetch) against a `numpy.add` loop on the same arrays. Both sides keep
   each result until the next one replaces it, as a caller holding fetched results does.
   Target: <= 1.10x.

OMP/OpenBLAS/MKL threads are pinned to 1; each figure is the median of repeated runs.

    python benchmarks/executor_overhead.py [--repeat 15] [--json]
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import opkit  # noqa: E402

TARGET_PER_OP = 5.0
TARGET_LARGE = 1.10


def _median_time(fn, repeat: int, number: int) -> float:
    """Median over `repeat` rounds of the mean time of `number` calls (seconds)."""
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def _paired(fn_a, fn_b, repeat: int, number_a: int, number_b: int):
    """Per-call seconds of fn_a and fn_b, one of each per round, timed back to back (the
    ratio is taken per round: a busy machine slows both sides alike). The order alternates
    from round to round: whichever side goes first in a round runs measurably slower (about
    3-5% on the 1000x1000 add), so a fixed order would bias the ratio."""
    fn_a(), fn_b()
    ta, tb = [], []
    for i in range(repeat):
        first, n_first, second, n_second = (fn_a, number_a, fn_b, number_b) if i % 2 == 0 \
            else (fn_b, number_b, fn_a, number_a)
        t0 = time.perf_counter()
        for _ in range(n_first):
            first()
        t1 = time.perf_counter()
        for _ in range(n_second):
            second()
        t2 = time.perf_counter()
        d_first, d_second = (t1 - t0) / n_first, (t2 - t1) / n_second
        if i % 2 == 0:
            ta.append(d_first)
            tb.append(d_second)
        else:
            ta.append(d_second)
            tb.append(d_first)
    return ta, tb


def chain_program(k: int, shape):
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=list(shape), dtype="float32", append_batch_size=False)
        y = opkit.layers.data("y", shape=list(shape), dtype="float32", append_batch_size=False)
        out = x
        for _ in range(k):
            out = opkit.layers.elementwise_add(out, y)
    return main, out


def per_op_overhead(k: int = 1000, repeat: int = 15) -> dict:
    main, out = chain_program(k, [1])
    a = np.ones(1, dtype="float32")
    b = np.full(1, 2.0, dtype="float32")
    exe, scope = opkit.Executor(opkit.CPUPlace()), opkit.Scope()
    feed = {"x": a, "y": b}
    run = lambda: exe.run(main, feed=feed, fetch_list=[out], scope=scope)  # noqa: E731
    assert float(run()[0][0]) == 1.0 + 2.0 * k
    exe_t, add_t = _paired(run, lambda: np.add(a, b), repeat, 1, 20000)
    exe_t = [t / k for t in exe_t]
    return {"ops": k, "per_op_us": statistics.median(exe_t) * 1e6,
            "numpy_add_us": statistics.median(add_t) * 1e6,
            "ratio": statistics.median(e / n for e, n in zip(exe_t, add_t)),
            "target": TARGET_PER_OP}


def large_add(n: int = 1000, repeat: int = 15) -> dict:
    main, out = chain_program(1, [n, n])
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    exe, scope = opkit.Executor(opkit.CPUPlace()), opkit.Scope()
    feed = {"x": a, "y": b}
    held = [None]  # each side keeps its last result alive until the next replaces it

    def run():
        held[0] = exe.run(main, feed=feed, fetch_list=[out], scope=scope)[0]

    def numpy_loop():
        held[0] = np.add(a, b)

    run()
    np.testing.assert_array_equal(held[0], a + b)
    # one call a side per round, many rounds: the two calls of a pair see the same load
    exe_t, np_t = _paired(run, numpy_loop, repeat * 20, 1, 1)
    return {"shape": [n, n], "executor_ms": statistics.median(exe_t) * 1e3,
            "numpy_ms": statistics.median(np_t) * 1e3,
            "ratio": statistics.median(e / n for e, n in zip(exe_t, np_t)),
            "target": TARGET_LARGE}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = {"machine": f"{platform.processor() or platform.machine()}, "
                         f"python {platform.python_version()}, numpy {np.__version__}",
              "per_op": per_op_overhead(args.ops, args.repeat),
              "large": large_add(1000, args.repeat)}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        p, g = result["per_op"], result["large"]
        print(f"per-op overhead ({p['ops']} chained elementwise_add on 1-element tensors): "
              f"{p['per_op_us']:.2f} us/op vs numpy.add {p['numpy_add_us']:.3f} us "
              f"-> {p['ratio']:.1f}x (target <= {p['target']:g}x)")
        print(f"1000x1000 elementwise_add: executor {g['executor_ms']:.3f} ms vs numpy "
              f"{g['numpy_ms']:.3f} ms -> {g['ratio']:.3f}x (target <= {g['target']:g}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
