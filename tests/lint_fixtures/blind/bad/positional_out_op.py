"""positional_out: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class PositionalOutOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("PositionalOut operator.")


class PositionalOutOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of positional_out should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("positional_out", PositionalOutOp, PositionalOutOpMaker)

@register_kernel("positional_out")
def positional_out_kernel(ctx):
    x = ctx.input("X")
    np.add(x, ctx.attr("bias"), x)  # expect: OPK001
    ctx.set_output("Out", x.copy())
