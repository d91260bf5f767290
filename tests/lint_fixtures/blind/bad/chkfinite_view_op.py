"""chkfinite_view: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class ChkfiniteViewOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ChkfiniteView operator.")


class ChkfiniteViewOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of chkfinite_view should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("chkfinite_view", ChkfiniteViewOp, ChkfiniteViewOpMaker)

@register_kernel("chkfinite_view")
def chkfinite_view_kernel(ctx):
    flat = np.asarray_chkfinite(ctx.input("X")).reshape(-1)
    flat[0] = 0  # expect: OPK001
    ctx.set_output("Out", np.zeros(3))
