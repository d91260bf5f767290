"""nan_copy: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class NanCopyOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("NanCopy operator.")


class NanCopyOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of nan_copy should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("nan_copy", NanCopyOp, NanCopyOpMaker)

@register_kernel("nan_copy")
def nan_copy_kernel(ctx):
    y = np.nan_to_num(ctx.input("X"))
    y[y > 1] = 1
    flat = np.ravel(ctx.input("X") * 1.0)
    flat[0] = 0
    ctx.set_output("Out", y + flat.reshape(y.shape))
