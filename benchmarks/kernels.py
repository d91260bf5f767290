"""CPU kernels through the executor against the bare numpy computation (and PyTorch CPU
when `torch` is importable; it is optional and never a project dependency).

Ops: conv2d (3x3, padding 1), softmax (last axis), elementwise_add with Paddle's axis
broadcast (Y [C] onto X [N, C, H, W], axis=1) and concat (axis=1), all float32.

"executor" is one `Executor.run` of a prepared one-op program (feed, op, fetch); "numpy" is
the same computation written directly in numpy (what the kernel would cost with no
framework); "torch" is the PyTorch CPU op. OMP/OpenBLAS/MKL threads (and torch's) are
pinned to 1; figures are medians of repeated rounds.

    python benchmarks/kernels.py [--repeat 9] [--json]
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import opkit  # noqa: E402

try:  # optional
    import torch  # noqa: E402

    torch.set_num_threads(1)
except Exception:  # noqa: BLE001 - any import problem means "no torch"
    torch = None


def _median_time(fn, repeat: int, number: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def _paired_rounds(fns: dict, repeat: int, number: int) -> dict:
    """{name: [seconds per call, one per round]}; each round times every fn in turn."""
    for fn in fns.values():
        fn()
    out = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            out[name].append((time.perf_counter() - t0) / number)
    return out


def _program(op_type, inputs: dict, out_slot: str, attrs: dict):
    """A one-op program over data variables named after `inputs` ({name: (slot, array)})."""
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        block = main.global_block()
        slots = {}
        for name, (slot, array) in inputs.items():
            var = opkit.layers.data(name, shape=list(array.shape), dtype=str(array.dtype),
                                    append_batch_size=False)
            slots.setdefault(slot, []).append(var)
        out = block.create_var(name="out", dtype="float32")
        block.append_op(op_type, inputs={s: v if len(v) > 1 else v[0] for s, v in slots.items()},
                        outputs={out_slot: out}, attrs=attrs)
    return main, out


# -- bare numpy versions -------------------------------------------------------------------
def np_conv2d(x, w, pad=1):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    s = xp.strides
    cols = np.lib.stride_tricks.as_strided(xp, (n, c, kh, kw, oh, ow),
                                           (s[0], s[1], s[2], s[3], s[2], s[3]))
    cols = cols.reshape(n, c * kh * kw, oh * ow)
    return np.matmul(w.reshape(m, -1)[None], cols).reshape(n, m, oh, ow)


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cases():
    rng = np.random.default_rng(0)
    f = lambda *shape: rng.standard_normal(shape, dtype=np.float32)  # noqa: E731
    x_conv, w_conv = f(8, 16, 32, 32), f(32, 16, 3, 3)
    x_sm = f(256, 1000)
    x_add, y_add = f(32, 64, 28, 28), f(64)
    cat = [f(32, 64, 14, 14) for _ in range(3)]
    if torch is not None:  # the torch lambdas below close over these
        tx_conv, tw_conv = torch.from_numpy(x_conv), torch.from_numpy(w_conv)
        tx_sm = torch.from_numpy(x_sm)
        tx_add, ty_add = torch.from_numpy(x_add), torch.from_numpy(y_add)
        tcat = [torch.from_numpy(a) for a in cat]
    out = [
        ("conv2d", "conv2d [8,16,32,32] * [32,16,3,3], pad 1",
         {"x": ("Input", x_conv), "w": ("Filter", w_conv)}, "Output",
         {"strides": [1, 1], "paddings": [1, 1], "dilations": [1, 1], "groups": 1},
         lambda: np_conv2d(x_conv, w_conv),
         (lambda: torch.nn.functional.conv2d(tx_conv, tw_conv, padding=1)) if torch else None),
        ("softmax", "softmax [256,1000], last axis", {"x": ("X", x_sm)}, "Out", {"axis": -1},
         lambda: np_softmax(x_sm),
         (lambda: torch.softmax(tx_sm, dim=-1)) if torch else None),
        ("elementwise_add", "elementwise_add [32,64,28,28] + [64], axis 1",
         {"x": ("X", x_add), "y": ("Y", y_add)}, "Out", {"axis": 1},
         lambda: x_add + y_add.reshape(1, -1, 1, 1),
         (lambda: tx_add + ty_add.reshape(1, -1, 1, 1)) if torch else None),
        ("concat", "concat 3 x [32,64,14,14], axis 1",
         {f"x{i}": ("X", a) for i, a in enumerate(cat)}, "Out", {"axis": 1},
         lambda: np.concatenate(cat, axis=1),
         (lambda: torch.cat(tcat, dim=1)) if torch else None),
    ]
    return out


def run(repeat: int = 9) -> dict:
    rows = []
    for op, label, inputs, slot, attrs, np_fn, torch_fn in cases():
        main, out = _program(op, inputs, slot, attrs)
        exe, scope = opkit.Executor(opkit.CPUPlace()), opkit.Scope()
        feed = {name: array for name, (_, array) in inputs.items()}
        exe_fn = functools.partial(exe.run, main, feed=feed, fetch_list=[out], scope=scope)
        np.testing.assert_allclose(exe_fn()[0], np_fn(), rtol=1e-4, atol=1e-4)
        number = max(1, int(0.02 / max(_median_time(np_fn, 3, 1), 1e-6)))
        fns = {"executor": exe_fn, "numpy": np_fn}
        if torch_fn is not None:
            np.testing.assert_allclose(torch_fn().numpy(), np_fn(), rtol=1e-3, atol=1e-3)
            fns["torch"] = torch_fn
        rounds = _paired_rounds(fns, repeat, number)
        row = {"op": op, "case": label}
        for name, times in rounds.items():
            row[f"{name}_ms"] = statistics.median(times) * 1e3
        # the ratio is the median of per-round ratios: rounds run back to back, so a busy
        # machine slows both sides of a ratio alike
        row["executor_vs_numpy"] = statistics.median(
            e / n for e, n in zip(rounds["executor"], rounds["numpy"]))
        if "torch" in rounds:
            row["executor_vs_torch"] = statistics.median(
                e / t for e, t in zip(rounds["executor"], rounds["torch"]))
        rows.append(row)
    return {"machine": f"{platform.machine()}, python {platform.python_version()}, "
                       f"numpy {np.__version__}"
                       + (f", torch {torch.__version__}" if torch is not None else
                          ", torch not installed"),
            "threads": 1, "repeat": repeat, "rows": rows}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.repeat)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(result["machine"], "| 1 thread | median of", result["repeat"])
    print("| case | executor ms | numpy ms | executor/numpy | torch ms | executor/torch |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in result["rows"]:
        t = (f"{r['torch_ms']:.3f} | {r['executor_vs_torch']:.2f}x" if "torch_ms" in r
             else "- | -")
        print(f"| {r['case']} | {r['executor_ms']:.3f} | {r['numpy_ms']:.3f} | "
              f"{r['executor_vs_numpy']:.2f}x | {t} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
