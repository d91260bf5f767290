"""kwargs_copy: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class KwargsCopyOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("KwargsCopy operator.")


class KwargsCopyOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of kwargs_copy should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("kwargs_copy", KwargsCopyOp, KwargsCopyOpMaker)

def _double(**arrays):
    out = {}
    for key, a in arrays.items():
        a = a.copy()
        a *= 2
        out[key] = a
    return out


@register_kernel("kwargs_copy")
def kwargs_copy_kernel(ctx):
    res = _double(x=ctx.input("X"))
    ctx.set_output("Out", res["x"])
