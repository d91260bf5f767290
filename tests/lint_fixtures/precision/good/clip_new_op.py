"""clip_new: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class ClipNewOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ClipNew operator.")


class ClipNewOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of clip_new should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("clip_new", ClipNewOp, ClipNewOpMaker)

def _clipped(ctx, lo, hi):
    x = ctx.input("X")
    return np.clip(x, lo, hi)


@register_kernel("clip_new")
def clip_new_kernel(ctx):
    y = _clipped(ctx, ctx.attr("min"), ctx.attr("max"))
    y *= 2
    ctx.set_output("Out", y)
