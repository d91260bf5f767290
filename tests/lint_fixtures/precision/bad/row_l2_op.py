"""row_l2: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class RowL2OpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("RowL2 operator.")


class RowL2Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of row_l2 should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("row_l2", RowL2Op, RowL2OpMaker)

@register_kernel("row_l2")
def row_l2_kernel(ctx):
    x = ctx.input("X")
    d = x.shape[-1]
    x2 = x.reshape(-1, d)
    for row in x2:
        row /= np.linalg.norm(row)  # expect: OPK001
    ctx.set_output("Out", x2.reshape(x.shape).copy())
