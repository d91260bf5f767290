"""fill_buffer: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class FillBufferOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("FillBuffer operator.")


class FillBufferOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of fill_buffer should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("fill_buffer", FillBufferOp, FillBufferOpMaker)

def _fill(dst, src):
    dst[...] = src
    dst *= 2


@register_kernel("fill_buffer")
def fill_buffer_kernel(ctx):
    x = ctx.input("X")
    out = np.empty_like(x)
    _fill(out, x)
    ctx.set_output("Out", out)
