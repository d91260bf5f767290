"""sort_rows: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class SortRowsOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("SortRows operator.")


class SortRowsOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of sort_rows should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("sort_rows", SortRowsOp, SortRowsOpMaker)

@register_kernel("sort_rows")
def sort_rows_kernel(ctx):
    x = ctx.input("X")
    order = np.argsort(x[:, 0])
    y = x[order]
    y[:, 0] = 0
    ctx.set_output("Out", y)
