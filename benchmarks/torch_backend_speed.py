"""The torch backend's cost per case: one forward+backward through the backend (numpy in,
numpy out: TorchBackend.make, PreparedOp.forward, PreparedOp.backward) against the same work
written directly in torch eager, one thread, side by side.

    python benchmarks/torch_backend_speed.py [--repeat N] [--runs N] [--size N] [OP ...]

The direct side does what the backend must, as a user would write it: the call's arguments
laid out once (attrs as literals), then per case leaf tensors built from the numpy arrays
(copies, requires_grad on the inputs differentiated), the op, every output read back to
numpy, `torch.autograd.grad` with the cotangent made from a numpy array, the gradients
copied out to numpy.

Times are the process's CPU time (one thread: what the call costs, not the time other
processes held the cores), interleaved rounds. Prints, per op, the median microseconds of
the direct call, of the backend with a fresh prepared op per case (`make+fwd+bwd`: what a
check pays per case) and with one prepared op run again (`fwd+bwd`), and the medians of
the per-round ratios; then the worst per-case ratio and the load average before and after
(the machine may be shared: compare ratios, not times). About 6 s of CPU at the defaults. Exits 1
when the worst per-case ratio is above the budget (1.5x, issue 46). Needs torch
(opkit-dl[torch]).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

BUDGET = 1.5


def _cases(n):
    """{op: (inputs {arg: array}, attrs, wrt)}: common ops, one float64 case each."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (n, n))
    return {
        "aten::hardshrink": ({"self": x}, {"lambd": 0.3}, ["self"]),
        "aten::relu": ({"self": x}, {}, ["self"]),
        "aten::_softmax": ({"self": x}, {"dim": 1, "half_to_float": False}, ["self"]),
        "aten::sum.dim_IntList": ({"self": x}, {"dim": [1], "keepdim": False}, ["self"]),
        "aten::mul.Tensor": ({"self": x, "other": rng.uniform(-1, 1, (n, n))}, {},
                             ["self", "other"]),
        "aten::native_layer_norm": (
            {"input": x, "weight": rng.uniform(0.5, 1.5, n), "bias": rng.uniform(-1, 1, n)},
            {"normalized_shape": [n], "eps": 1e-5}, ["input", "weight", "bias"]),
    }


class _Leaf:
    """Where a call's argument is the input tensor `name` (the direct call's template)."""

    def __init__(self, name):
        self.name = name


def _direct(torch, overload, schema, inputs, attrs, wrt, cot):
    """The same work written directly in torch eager, as a user would: the call's arguments
    laid out once (attrs as literals), then per case leaf tensors from the arrays (copies,
    as the backend's), the op, every output read back to numpy (the backend returns them
    all), torch.autograd.grad with the cotangent from numpy, the gradients to numpy."""
    from opkit_torch.op import call_args

    args, kwargs = call_args(schema, {k: _Leaf(k) for k in inputs}, attrs)

    def run():
        ts = {k: torch.from_numpy(v).clone().requires_grad_(k in wrt)
              for k, v in inputs.items()}
        out = overload(*[ts[a.name] if type(a) is _Leaf else a for a in args],
                       **{k: ts[a.name] if type(a) is _Leaf else a for k, a in kwargs.items()})
        outs = out if isinstance(out, tuple) else (out,)
        arrays = [o.detach().numpy().copy() for o in outs]
        grads = torch.autograd.grad(outs[0], [ts[k] for k in wrt], torch.from_numpy(cot))
        return arrays, [g.numpy().copy() for g in grads]
    return run


def _backend(plugin, op, inputs, attrs, wrt, cot):
    from harness.backend.case import VarSpec

    specs = {k: [VarSpec(k, v)] for k, v in inputs.items()}
    first = plugin.describe(op).outputs[0].name

    def per_case():
        p = plugin.make(op, specs, attrs)
        p.forward()
        return p.backward({first: cot}, wrt)

    p = plugin.make(op, specs, attrs)

    def prepared():
        p.forward()
        return p.backward({first: cot}, wrt)
    return per_case, prepared


def _median_us(fn, repeat, n):
    times = []
    for _ in range(repeat):   # CPU time of this (one-threaded) process: steadier on a
        t = time.process_time()   # shared machine than the wall clock
        for _ in range(n):
            fn()
        times.append((time.process_time() - t) / n * 1e6)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=11, help="medians of this many rounds")
    ap.add_argument("--runs", type=int, default=200, help="calls per round")
    ap.add_argument("--size", type=int, default=64, help="inputs are size x size")
    ap.add_argument("ops", nargs="*")
    a = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    from opkit_torch import plugin
    from opkit_torch.env import resolve
    from opkit_torch.schema import read

    torch.set_num_threads(1)
    cases = _cases(a.size)
    ops = a.ops or list(cases)
    load0 = os.getloadavg()[0]
    print(f"{'op':28} {'direct us':>10} {'make+fwd+bwd':>13} {'ratio':>6} "
          f"{'fwd+bwd':>9} {'ratio':>6}")
    worst = (0.0, "")
    for op in ops:
        inputs, attrs, wrt = cases[op]
        schema = read(op)
        cot = np.random.default_rng(1).uniform(-1, 1, _out_shape(torch, op, inputs, attrs,
                                                                   schema))
        direct = _direct(torch, resolve(op), schema, inputs, attrs, wrt, cot)
        per_case, prepared = _backend(plugin, op, inputs, attrs, wrt, cot)
        for f in (direct, per_case, prepared):      # warm up
            for _ in range(20):
                f()
        rounds = [[_median_us(f, 1, a.runs) for f in (direct, per_case, prepared)]
                  for _ in range(a.repeat)]        # interleaved: the same load on each
        d, c, p = (statistics.median(r[i] for r in rounds) for i in range(3))
        rc = statistics.median(r[1] / r[0] for r in rounds)
        rp = statistics.median(r[2] / r[0] for r in rounds)
        print(f"{op:28} {d:10.1f} {c:13.1f} {rc:6.2f} {p:9.1f} {rp:6.2f}")
        worst = max(worst, (rc, op))
    load1 = os.getloadavg()[0]
    print(f"worst per-case ratio {worst[0]:.2f}x ({worst[1]}); budget {BUDGET}x; "
          f"load average {load0:.1f} before, {load1:.1f} after; torch {torch.__version__}, "
          f"1 thread, {a.size}x{a.size} float64, medians of {a.repeat} x {a.runs} calls")
    return 0 if worst[0] <= BUDGET else 1


def _out_shape(torch, op, inputs, attrs, schema):
    from opkit_torch.env import resolve
    from opkit_torch.op import call_args

    args, kwargs = call_args(schema, {k: torch.from_numpy(v) for k, v in inputs.items()}, attrs)
    out = resolve(op)(*args, **kwargs)
    return tuple((out[0] if isinstance(out, tuple) else out).shape)


if __name__ == "__main__":
    sys.exit(main())
