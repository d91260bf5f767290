"""rows_copy: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class RowsCopyOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("RowsCopy operator.")


class RowsCopyOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of rows_copy should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("rows_copy", RowsCopyOp, RowsCopyOpMaker)

def _as_rows(a):
    return a.reshape(a.shape[0], -1).copy()


@register_kernel("rows_copy")
def rows_copy_kernel(ctx):
    rows = _as_rows(ctx.input("X"))
    rows[:, 1:] = 0
    ctx.set_output("Out", rows)
