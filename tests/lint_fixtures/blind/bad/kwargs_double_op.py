"""kwargs_double: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class KwargsDoubleOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("KwargsDouble operator.")


class KwargsDoubleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of kwargs_double should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("kwargs_double", KwargsDoubleOp, KwargsDoubleOpMaker)

def _double(**arrays):
    for a in arrays.values():
        a *= 2  # expect: OPK001


@register_kernel("kwargs_double")
def kwargs_double_kernel(ctx):
    _double(x=ctx.input("X"))
    ctx.set_output("Out", np.zeros(3))
