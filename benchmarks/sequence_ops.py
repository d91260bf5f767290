"""sequence_pool SUM and MAX: opkit's vectorized kernel against a per-sequence Python loop
and, when `paddle` is importable, Paddle's CPU kernel.

    OMP_NUM_THREADS=1 python benchmarks/sequence_ops.py [--sequences 10000] [--repeat 7]

10,000 sequences with lengths drawn uniformly from 0..40 (about 1 in 41 empty), 128 float32
features. Threads are pinned to 1 (set before numpy/paddle are imported); every figure is
the median of --repeat runs after one warm-up. `kernel` times the opkit kernel as an op runs
it (PreparedOp.forward: run-time infer_shape + kernel); `loop` is the per-sequence loop
below. Paddle is skipped (with the reason) when it cannot be imported: it is never an opkit
dependency — install it in a throwaway venv and run this file there with opkit on
PYTHONPATH.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "CPU_NUM",
             "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def make_batch(n: int, max_len: int, features: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, max_len + 1, n)
    x = rng.standard_normal((int(lengths.sum()), features)).astype(np.float32)
    return x, [lengths.tolist()]


def loop_pool(x, lengths, pooltype, pad_value=0.0):
    """The per-sequence Python loop (what a naive kernel does)."""
    last = lengths[-1]
    out = np.full((len(last), x.shape[1]), pad_value, dtype=x.dtype)
    start = 0
    for i, n in enumerate(last):
        if n:
            seq = x[start:start + n]
            out[i] = seq.sum(axis=0) if pooltype == "SUM" else seq.max(axis=0)
        start += n
    return out


def timeit(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def paddle_runner(x, lengths, pooltype):
    """A callable running Paddle's sequence_pool on the batch, or the reason it can't."""
    try:
        import paddle
    except Exception as exc:  # noqa: BLE001
        return None, f"paddle not importable ({type(exc).__name__}: {exc})"
    paddle.enable_static()
    paddle.set_device("cpu")
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        var = paddle.static.data("x", [-1, x.shape[1]], dtype="float32", lod_level=1)
        out = paddle.static.nn.sequence_pool(var, pool_type=pooltype.lower())
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    tensor = paddle.base.core.LoDTensor() if hasattr(paddle, "base") else \
        paddle.fluid.core.LoDTensor()
    tensor.set(x, paddle.CPUPlace())
    tensor.set_recursive_sequence_lengths(lengths)

    def run():
        return exe.run(main, feed={"x": tensor}, fetch_list=[out])[0]

    return run, f"paddle {paddle.__version__}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sequences", type=int, default=10_000)
    ap.add_argument("--max-len", type=int, default=40)
    ap.add_argument("--features", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    import reference_ops  # noqa: F401
    from harness.backend.seam import PreparedOp
    from harness.backend.case import normalize_slots

    x, lengths = make_batch(args.sequences, args.max_len, args.features)
    rows = []
    for pooltype in ("SUM", "MAX"):
        prepared = PreparedOp("sequence_pool", normalize_slots({"X": (x, lengths)}),
                              {"pooltype": pooltype, "is_test": True})
        got = prepared.forward()["Out"]
        want = loop_pool(x, lengths, pooltype)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        kernel = timeit(prepared.forward, args.repeat)
        loop = timeit(lambda pooltype=pooltype: loop_pool(x, lengths, pooltype), args.repeat)
        row = {"pooltype": pooltype, "kernel_ms": kernel * 1e3, "loop_ms": loop * 1e3,
               "speedup_vs_loop": loop / kernel}
        run, note = paddle_runner(x, lengths, pooltype)
        if run is not None:
            np.testing.assert_allclose(np.asarray(run()), want, rtol=1e-4, atol=1e-4)
            paddle_t = timeit(run, args.repeat)
            row.update(paddle_ms=paddle_t * 1e3, paddle_vs_kernel=paddle_t / kernel)
        row["paddle"] = note
        rows.append(row)
    meta = {"sequences": args.sequences, "rows": int(x.shape[0]), "features": args.features,
            "max_len": args.max_len, "dtype": "float32", "repeat": args.repeat,
            "threads": os.environ["OMP_NUM_THREADS"], "numpy": np.__version__,
            "python": platform.python_version(), "cpu": platform.processor() or
            platform.machine()}
    if args.json:
        print(json.dumps({"meta": meta, "results": rows}, indent=2))
        return
    print(f"sequence_pool, {meta['sequences']} sequences (lengths 0..{args.max_len}), "
          f"{meta['rows']} rows x {args.features} float32, 1 thread, median of {args.repeat}")
    for r in rows:
        line = (f"  {r['pooltype']:4}  opkit {r['kernel_ms']:8.2f} ms   loop "
                f"{r['loop_ms']:8.2f} ms   x{r['speedup_vs_loop']:.1f}")
        if "paddle_ms" in r:
            line += f"   paddle {r['paddle_ms']:8.2f} ms ({r['paddle']})"
        else:
            line += f"   paddle skipped: {r['paddle']}"
        print(line)


if __name__ == "__main__":
    main()
