"""masked_shift: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class MaskedShiftOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("MaskedShift operator.")


class MaskedShiftOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of masked_shift should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("masked_shift", MaskedShiftOp, MaskedShiftOpMaker)

@register_kernel("masked_shift")
def masked_shift_kernel(ctx):
    x = ctx.input("X")
    n = x.shape[0]
    mask = x > 0
    pos = x[mask]
    pos += 1
    picked = x[:, [0, 2]]
    picked[...] = 0
    every = x[np.arange(n)]
    every[0] = 1
    negs = x[~mask]
    negs.sort()
    ctx.set_output("Out", pos.sum() + picked + every + negs.sum())
