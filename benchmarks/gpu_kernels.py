"""Time the dedicated cupy kernels (reference_ops.gpu.kernels) against the same op written
with plain cupy calls (what the xp-shared kernel runs on the GPU), numpy on the CPU, and
PyTorch on the GPU when torch with CUDA is importable.

    python benchmarks/gpu_kernels.py [--repeat 20] [--json FILE] [--quick]

GPU times come from CUDA events around `repeat` back-to-back calls after a warm-up
(compilation excluded), divided by `repeat`, best of 3 trials: time per call as the GPU
sees it, so Python-side overhead shows where it exceeds the kernel's time. CPU times are the median of `repeat` wall-clock runs (at most 5 for slow ones).
Every contender's result is checked against numpy's before it is timed. Without cupy or a
visible CUDA device the script prints the reason and exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


TRIALS = 3


def _gpu_time_ms(cp, fn, repeat):
    fn()
    cp.cuda.get_current_stream().synchronize()
    best = float("inf")
    for _ in range(TRIALS):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(repeat):
            fn()
        stop.record()
        stop.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, stop) / repeat)
    return best


def _host_time_ms(cp, fn, repeat):
    """Python-side time per call (the calls are queued, not waited for): where it is close
    to the GPU time per call, the op is bound by its host overhead, not by the kernel."""
    cp.cuda.get_current_stream().synchronize()
    t = time.perf_counter()
    for _ in range(repeat):
        fn()
    host = (time.perf_counter() - t) / repeat * 1000
    cp.cuda.get_current_stream().synchronize()
    return host


def _torch_time_ms(torch, fn, repeat):
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(TRIALS):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeat):
            fn()
        stop.record()
        stop.synchronize()
        best = min(best, start.elapsed_time(stop) / repeat)
    return best


def _cpu_time_ms(fn, repeat):
    fn()
    times = []
    t_total = time.perf_counter()
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if time.perf_counter() - t_total > 5 and len(times) >= 3:
            break
    return sorted(times)[len(times) // 2] * 1000


def _torch():
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except Exception:
        return None


def _np_seqpool_sum(x, offsets):
    starts = np.asarray(offsets[:-1])
    lengths = np.diff(offsets)
    out = np.zeros((len(starts),) + x.shape[1:], x.dtype)
    nonempty = lengths > 0
    if nonempty.any():
        out[nonempty] = np.add.reduceat(x, starts[nonempty], axis=0)
    return out


def cases(quick: bool):
    """(name, shape text, numpy inputs, numpy fn, dedicated fn(cp inputs), plain-cupy fn,
    torch fn or None, tolerance)."""
    from reference_ops._common import elementwise_y_view_shape
    from reference_ops.gpu import kernels

    rng = np.random.default_rng(0)
    s = 4 if quick else 1

    def r(*shape):
        return rng.standard_normal(shape).astype("float32")

    out = []
    # elementwise_add, Y broadcast along axis 1 (a middle run of X)
    x, y = r(256 // s, 1024, 64), r(1024)
    view = tuple(elementwise_y_view_shape(x.shape, y.shape, 1))
    out.append(("elementwise_add", f"X{list(x.shape)} + Y{list(y.shape)}, axis=1 (f32)",
                (x, y), lambda x, y: x + y.reshape(view),
                lambda cp, x, y: kernels.elementwise_add(x, y, 1),
                lambda cp, x, y: cp.add(x, y.reshape(view)),
                lambda t, x, y: x + y.reshape(view), 0.0))
    # softmax, last axis and a middle axis
    for shape, axis in (((8192 // s, 1024), -1), ((64 // s, 1000, 64), 1)):
        x = r(*shape)

        def np_softmax(x, axis=axis):
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)

        def cp_softmax(cp, x, axis=axis):
            e = cp.exp(x - cp.max(x, axis=axis, keepdims=True))
            return e / cp.sum(e, axis=axis, keepdims=True)

        out.append(("softmax", f"X{list(shape)}, axis={axis} (f32)", (x,), np_softmax,
                    lambda cp, x, axis=axis: kernels.softmax(x, axis), cp_softmax,
                    lambda t, x, axis=axis: t.softmax(x, dim=axis), 1e-5))
    # sum of 8 tensors
    xs = [r(4096 // s, 1024) for _ in range(8)]

    def np_sum(*xs):
        acc = xs[0].copy()
        for x in xs[1:]:
            acc += x
        return acc

    def cp_sum(cp, *xs):
        acc = xs[0].copy()
        for x in xs[1:]:
            acc += x
        return acc

    def t_sum(t, *xs):
        acc = xs[0].clone()
        for x in xs[1:]:
            acc += x
        return acc

    out.append(("sum", f"8 x [{4096 // s}, 1024] (f32)", tuple(xs), np_sum,
                lambda cp, *xs: kernels.sum_n(list(xs)), cp_sum, t_sum, 0.0))
    # concat along axis 1: many narrow inputs, few wide ones
    for n, shape in ((64, (4096 // s, 32)), (4, (4096 // s, 1024))):
        xs = [r(*shape) for _ in range(n)]
        out.append(("concat", f"{n} x {list(shape)}, axis=1 (f32)", tuple(xs),
                    lambda *xs: np.concatenate(xs, axis=1),
                    lambda cp, *xs: kernels.concat(list(xs), 1),
                    lambda cp, *xs: cp.concatenate(xs, axis=1),
                    lambda t, *xs: t.cat(xs, dim=1), 0.0))
    # sequence_pool SUM: many short sequences; a few long ones (deterministic and atomics)
    for label, lengths, dim, tol in (
            ("4096 seqs of 0..64 rows", rng.integers(0, 65, 4096 // s), 128, 1e-4),
            ("4 seqs of 250000 rows", np.full(4, 250000 // s), 16, 5e-2)):
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        x = r(int(offsets[-1]), dim)
        seg = np.repeat(np.arange(len(lengths)), lengths)

        def cp_loop(cp, x, offsets=offsets):
            # what an xp kernel looping over the sequences runs: one launch per sequence
            return cp.stack([x[b:e].sum(axis=0) for b, e in zip(offsets[:-1], offsets[1:])])

        n_seq = len(lengths)

        def t_index_add(t, x, seg=seg, n=n_seq):
            out = t.zeros((n, x.shape[1]), dtype=x.dtype, device=x.device)
            return out.index_add_(0, t.as_tensor(seg, device=x.device), x)

        out.append(("sequence_pool SUM", f"{label}, dim {dim} (f32)", (x,),
                    lambda x, offsets=offsets: _np_seqpool_sum(x, offsets),
                    lambda cp, x, offsets=offsets: kernels.sequence_pool(x, offsets, "SUM")[0],
                    cp_loop if len(lengths) <= 64 or not quick else None,
                    t_index_add, tol))
    return out


def gpu_name() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                               "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=30).stdout.strip() or "unknown"
    except Exception as exc:  # no nvidia-smi
        return f"unknown ({exc.__class__.__name__})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    args = parser.parse_args()

    from opkit.framework.place import cupy_unavailable_reason

    reason = cupy_unavailable_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    import cupy as cp

    from reference_ops.gpu import kernels

    torch = _torch()
    info = {"gpu": gpu_name(), "date": time.strftime("%Y-%m-%d"),
            "cupy": cp.__version__, "numpy": np.__version__,
            "torch": getattr(torch, "__version__", None), "python": platform.python_version(),
            "cpu_threads": os.cpu_count(), "repeat": args.repeat,
            "nondeterministic_env": kernels.nondeterministic_allowed(), "rows": []}
    print(f"GPU: {info['gpu']}; cupy {info['cupy']}; numpy {info['numpy']}; "
          f"torch {info['torch']}; {info['date']}")
    header = ("| op | case | dedicated cupy (ms) | its host time (ms/call) | plain cupy (ms) | "
              "numpy CPU (ms) | torch GPU (ms) |")
    print(header)
    print("|" + " --- |" * 7)
    for name, shape, np_in, np_fn, ded_fn, cp_fn, t_fn, tol in cases(args.quick):
        if name.startswith("sequence_pool"):  # float32 sums: compare with float64's
            want = np_fn(*[a.astype(np.float64) for a in np_in]).astype(np.float32)
        else:
            want = np_fn(*np_in)
        d_in = [cp.asarray(a) for a in np_in]
        row = {"op": name, "case": shape}

        def check(got, label, want=want, tol=tol, name=name):
            got = np.asarray(got)
            if tol == 0.0:
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {label}")
            else:
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                           err_msg=f"{name} {label}")

        check(cp.asnumpy(ded_fn(cp, *d_in)), "dedicated")
        row["dedicated_ms"] = _gpu_time_ms(cp, lambda f=ded_fn, a=d_in: f(cp, *a), args.repeat)
        row["dedicated_host_ms"] = _host_time_ms(cp, lambda f=ded_fn, a=d_in: f(cp, *a), args.repeat)
        if cp_fn is not None:
            check(cp.asnumpy(cp_fn(cp, *d_in)), "plain cupy")
            row["plain_cupy_ms"] = _gpu_time_ms(cp, lambda f=cp_fn, a=d_in: f(cp, *a), args.repeat)
        row["numpy_ms"] = _cpu_time_ms(lambda f=np_fn, a=np_in: f(*a), args.repeat)
        if torch is not None and t_fn is not None:
            t_in = [torch.as_tensor(a, device="cuda") for a in np_in]
            check(t_fn(torch, *t_in).cpu().numpy(), "torch")
            row["torch_ms"] = _torch_time_ms(torch, lambda f=t_fn, a=t_in: f(torch, *a), args.repeat)
        if name == "sequence_pool SUM":
            os.environ[kernels.NONDETERMINISTIC_ENV] = "1"
            try:
                check(cp.asnumpy(ded_fn(cp, *d_in)), "atomics")
                row["atomics_ms"] = _gpu_time_ms(cp, lambda f=ded_fn, a=d_in: f(cp, *a), args.repeat)
            finally:
                os.environ.pop(kernels.NONDETERMINISTIC_ENV, None)
        info["rows"].append(row)

        def fmt(key, row=row):
            return f"{row[key]:.3f}" if key in row else "-"

        extra = f" (atomics, OPKIT_GPU_NONDETERMINISTIC=1: {row['atomics_ms']:.3f})" \
            if "atomics_ms" in row else ""
        print(f"| {name} | {shape} | {fmt('dedicated_ms')}{extra} | "
              f"{fmt('dedicated_host_ms')} | {fmt('plain_cupy_ms')} | "
              f"{fmt('numpy_ms')} | {fmt('torch_ms')} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
