"""check_grad against torch.autograd.gradcheck(fast_mode=True), side by side in one run.

At about 10^4 checked float64 elements, warm (each side run once first):
  * square: X 100x100;
  * mul: X 1000x10 . Y 10x10 (X and Y both checked);
  * softmax: X 100x100, last axis;
  * conv2d: Input 2x4x16x16, Filter 8x4x3x3, stride 1, pad 1 (2,048 + 288 checked elements:
    conv2d's cost is its forward runs, so it is reported at that size).
opkit: `harness.judging.grad_judge.check_grad` in its default mode on CPU float64 (the analytic
gradient against numeric ones; a failure names each wrong element). torch:
`torch.autograd.gradcheck(fn, inputs, fast_mode=True)` on the same function written in
torch (it checks one random projection and cannot say which element is wrong). Rounds
alternate which side goes first; the figures are medians over rounds.

    /path/to/venv-with-torch/bin/python benchmarks/gradcheck_vs_torch.py [--repeat 11] [--cpu]
                                                                         [OP ...]

`--cpu`: CPU time of the process instead of wall time (a loaded machine's figure; the budget
is in wall time on a quiet one).

torch is optional and never a project dependency: install it in a throwaway venv (with
`pip install -e .` of this project) to run this script.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
os.environ["OPKIT_NO_GPU"] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from harness.backend.case import Case  # noqa: E402
from harness.judging.grad_judge import check_grad  # noqa: E402
from harness.reporting.report import FAIL  # noqa: E402


def cases(torch):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (100, 100))
    e = np.exp(x - x.max(1, keepdims=True))
    mx, my = rng.uniform(-1, 1, (1000, 10)), rng.uniform(-1, 1, (10, 10))
    ci, cf = rng.uniform(-1, 1, (2, 4, 16, 16)), rng.uniform(-1, 1, (8, 4, 3, 3))
    tnn = torch.nn.functional
    conv_attrs = {"strides": [1, 1], "paddings": [1, 1], "dilations": [1, 1], "groups": 1}
    return [
        ("square", Case("square", "square", {"X": x}, {}, {"Out": x * x}), ["X"],
         lambda a: a * a, [x]),
        ("mul", Case("mul", "mul", {"X": mx, "Y": my}, {}, {"Out": mx @ my}), ["X", "Y"],
         lambda a, b: a @ b, [mx, my]),
        ("softmax", Case("softmax", "softmax", {"X": x}, {"axis": -1},
                         {"Out": e / e.sum(1, keepdims=True)}), ["X"],
         lambda a: torch.softmax(a, -1), [x]),
        ("conv2d", Case("conv2d", "conv2d", {"Input": ci, "Filter": cf}, conv_attrs, {}),
         ["Input", "Filter"], lambda a, b: tnn.conv2d(a, b, padding=1), [ci, cf]),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cpu", action="store_true", help="time CPU time of the process "
                        "(time.process_time) instead of wall time: for a loaded machine")
    parser.add_argument("ops", nargs="*", help="only these rows (square, mul, softmax, "
                        "conv2d); default all")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    rows = []
    for name, case, names, fn, arrays in cases(torch):
        if args.ops and name not in args.ops:
            continue
        out_name = "Output" if name == "conv2d" else "Out"
        tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]

        def run_opkit(case=case, names=names, out_name=out_name):
            results = check_grad(case, names, [out_name], places=("CPU",),
                                 dtypes=("float64",))
            assert not any(r.status == FAIL for r in results), results
            return results

        def run_torch(fn=fn, tensors=tensors):
            assert torch.autograd.gradcheck(fn, tensors, fast_mode=True)

        run_opkit(), run_torch()
        clock = time.process_time if args.cpu else time.perf_counter
        times = {"opkit": [], "torch": []}
        for i in range(args.repeat):
            order = [("opkit", run_opkit), ("torch", run_torch)]
            for label, f in order if i % 2 == 0 else order[::-1]:
                t0 = clock()
                f()
                times[label].append(clock() - t0)
        o, t = statistics.median(times["opkit"]), statistics.median(times["torch"])
        rows.append({"op": name, "elements": int(sum(a.size for a in arrays)),
                     "opkit_ms": o * 1e3, "torch_fast_ms": t * 1e3,
                     "ratio": statistics.median(a / b for a, b in zip(times["opkit"],
                                                                     times["torch"]))})
    if args.json:
        print(json.dumps({"torch": torch.__version__, "rows": rows}, indent=1))
    else:
        print(f"{'op':<9} {'elements':>8} {'opkit ms':>9} {'torch fast ms':>14} {'ratio':>6}")
        for r in rows:
            print(f"{r['op']:<9} {r['elements']:>8} {r['opkit_ms']:9.2f} "
                  f"{r['torch_fast_ms']:14.2f} {r['ratio']:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
