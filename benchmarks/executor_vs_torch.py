"""Per-op cost of a prepared opkit program against PyTorch eager, side by side in one run.

The chain benchmark: K (default 200) chained `elementwise_add` ops on 1-element float32
tensors. opkit runs them as one prepared program (`Executor.run`: feed, K ops, fetch);
PyTorch runs `torch.add` K times in eager mode (no autograd: `torch.no_grad()`), from the
same inputs. Each side's per-op time is divided by one `numpy.add` on the same arrays timed
in the same round, and rounds alternate which side goes first. Figures: medians over rounds.

    /path/to/venv-with-torch/bin/python benchmarks/executor_vs_torch.py [--repeat 31]

torch is optional and never a project dependency: install it in a throwaway venv (with
`pip install -e .` of this project) to run this script.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import opkit  # noqa: E402


def chain_program(k: int):
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[1], dtype="float32", append_batch_size=False)
        y = opkit.layers.data("y", shape=[1], dtype="float32", append_batch_size=False)
        out = x
        for _ in range(k):
            out = opkit.layers.elementwise_add(out, y)
    return main, out


def _per_call(fn, number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    k = args.ops
    prog, out = chain_program(k)
    a = np.ones(1, dtype="float32")
    b = np.full(1, 2.0, dtype="float32")
    exe, scope = opkit.Executor(opkit.CPUPlace()), opkit.Scope()
    feed = {"x": a, "y": b}

    def opkit_chain():
        return exe.run(prog, feed=feed, fetch_list=[out], scope=scope)

    ta, tb = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())

    def torch_chain():
        with torch.no_grad():
            r = ta
            for _ in range(k):
                r = torch.add(r, tb)
        return r

    assert float(opkit_chain()[0][0]) == float(torch_chain()[0]) == 1.0 + 2.0 * k
    for _ in range(3):
        opkit_chain(), torch_chain()
    sides = {"opkit": opkit_chain, "torch": torch_chain}
    ratios = {"opkit": [], "torch": []}
    per_op = {"opkit": [], "torch": []}
    numpy_us = []
    for i in range(args.repeat):
        order = ["opkit", "torch"] if i % 2 == 0 else ["torch", "opkit"]
        add = _per_call(lambda: np.add(a, b), 20000)
        numpy_us.append(add * 1e6)
        for name in order:
            t = _per_call(sides[name], 20) / k
            per_op[name].append(t * 1e6)
            ratios[name].append(t / add)
    result = {
        "ops": k,
        "numpy_add_us": statistics.median(numpy_us),
        "opkit_per_op_us": statistics.median(per_op["opkit"]),
        "torch_per_op_us": statistics.median(per_op["torch"]),
        "opkit_over_numpy": statistics.median(ratios["opkit"]),
        "torch_over_numpy": statistics.median(ratios["torch"]),
        "opkit_over_torch": statistics.median(o / t for o, t in zip(per_op["opkit"],
                                                                    per_op["torch"])),
        "torch": torch.__version__,
    }
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"{k} chained 1-element adds, median of {args.repeat} rounds: numpy.add "
              f"{result['numpy_add_us']:.3f} us; opkit {result['opkit_per_op_us']:.3f} us/op "
              f"({result['opkit_over_numpy']:.2f}x numpy); torch eager "
              f"{result['torch_per_op_us']:.3f} us/op ({result['torch_over_numpy']:.2f}x "
              f"numpy); opkit/torch {result['opkit_over_torch']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
