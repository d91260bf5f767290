"""closure_fill: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class ClosureFillOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ClosureFill operator.")


class ClosureFillOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of closure_fill should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("closure_fill", ClosureFillOp, ClosureFillOpMaker)

@register_kernel("closure_fill")
def closure_fill_kernel(ctx):
    x = ctx.input("X")

    def reset(value):
        x[...] = value  # expect: OPK001

    reset(ctx.attr("value"))
    ctx.set_output("Out", np.zeros(3))
