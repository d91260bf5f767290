"""`dtypes`' integer-kernel comparison and an output whose dtype an attr fixes (Paddle's
reduce out_dtype): an int kernel that gives the fixed dtype passes; one that promotes an
output whose dtype nothing fixes still fails, with the dtype it gave."""
from __future__ import annotations

import numpy as np


def _register(name, fixed: bool):
    from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator

    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) input.")
            self.add_output("Out", "(Tensor) output.")
            self.add_comment("Out = 2 X")

    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))
            if fixed:
                ctx.set_output_dtype("Out", "float64")

    register_operator(name, Op, Maker)

    def kernel(ctx):
        x = ctx.input("X")
        out = x.astype("float64") * 2.0         # float64 for every input dtype
        ctx.set_output("Out", out if fixed or x.dtype.kind != "f" else out.astype(x.dtype))
    register_kernel(name, place="CPU", dtypes=("float32", "float64", "int32", "int64"))(kernel)


def _dtypes(name):
    from harness.backend.case import Case
    from harness.executing.pool import run_case

    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    return run_case(Case(f"Test_{name}", name, {"X": x}, {}, {"Out": 2 * x}),
                    checks=["dtypes"])


def test_int_kernel_giving_the_fixed_dtype_passes():
    from opkit.registry import scratch

    with scratch():
        _register("fd_fixed", fixed=True)
        got = [r for r in _dtypes("fd_fixed") if r.place == "CPU"]
    assert got and all(r.status == "pass" for r in got), got


def test_int_kernel_promoting_an_unfixed_output_fails():
    from opkit.registry import scratch

    with scratch():
        _register("fd_promotes", fixed=False)
        got = [r for r in _dtypes("fd_promotes") if r.status == "fail"]
    assert got and any("output 'Out' is float64, expected int32" in r.message
                       for r in got), got
