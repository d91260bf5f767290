"""closure_out: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class ClosureOutOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ClosureOut operator.")


class ClosureOutOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of closure_out should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("closure_out", ClosureOutOp, ClosureOutOpMaker)

@register_kernel("closure_out")
def closure_out_kernel(ctx):
    x = ctx.input("X")
    out = np.empty_like(x)

    def put(i, value):
        out[i] = value

    for i in range(x.shape[0]):
        put(i, x[i] * 2)
    ctx.set_output("Out", out)
