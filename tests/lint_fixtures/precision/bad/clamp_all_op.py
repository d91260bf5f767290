"""clamp_all: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class ClampAllOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ClampAll operator.")


class ClampAllOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of clamp_all should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("clamp_all", ClampAllOp, ClampAllOpMaker)

def _clamp_inputs(ctx, hi):
    for t in ctx.inputs("X"):
        np.minimum(t, hi, out=t)  # expect: OPK001


@register_kernel("clamp_all")
def clamp_all_kernel(ctx):
    _clamp_inputs(ctx, ctx.attr("max"))
    ctx.set_output("Out", np.stack([t.copy() for t in ctx.inputs("X")]))
