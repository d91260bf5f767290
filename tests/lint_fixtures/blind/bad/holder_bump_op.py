"""holder_bump: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class HolderBumpOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("HolderBump operator.")


class HolderBumpOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of holder_bump should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("holder_bump", HolderBumpOp, HolderBumpOpMaker)

class _Holder:
    def __init__(self, data):
        self.data = data


@register_kernel("holder_bump")
def holder_bump_kernel(ctx):
    h = _Holder(ctx.input("X"))
    h.data += 1  # expect: OPK001
    ctx.set_output("Out", np.zeros(3))
