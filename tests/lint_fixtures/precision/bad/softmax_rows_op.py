"""softmax_rows: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class SoftmaxRowsOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("SoftmaxRows operator.")


class SoftmaxRowsOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of softmax_rows should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("softmax_rows", SoftmaxRowsOp, SoftmaxRowsOpMaker)

def _stabilize(row):
    row -= row.max()  # expect: OPK001
    return np.exp(row)


@register_kernel("softmax_rows")
def softmax_rows_kernel(ctx):
    x = ctx.input("X")
    n, d = x.shape
    out = np.empty_like(x)
    for i in range(n):
        e = _stabilize(row=x[i])
        out[i] = e / e.sum()
    ctx.set_output("Out", out)
