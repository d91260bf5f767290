"""three_positional: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class ThreePositionalOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ThreePositional operator.")


class ThreePositionalOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of three_positional should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("three_positional", ThreePositionalOp, ThreePositionalOpMaker)

@register_kernel("three_positional")
def three_positional_kernel(ctx):
    x = ctx.input("X")
    y = np.clip(x, 0, 1)
    z = np.where(x > 0, x, 0)
    buf = np.empty_like(x)
    np.add(x, 1, buf)
    ctx.set_output("Out", y + z + buf)
