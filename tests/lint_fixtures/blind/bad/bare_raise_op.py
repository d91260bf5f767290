"""bare_raise: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class BareRaiseOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("BareRaise operator.")


class BareRaiseOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of bare_raise should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("bare_raise", BareRaiseOp, BareRaiseOpMaker)

@register_kernel("bare_raise")
def bare_raise_kernel(ctx):
    x = ctx.input("X")
    if x.ndim != 2:
        raise errors.InvalidArgument  # expect: OPK002
    ctx.set_output("Out", x * 2)
