"""col_scale: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class ColScaleOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ColScale operator.")


class ColScaleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of col_scale should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("col_scale", ColScaleOp, ColScaleOpMaker)

@register_kernel("col_scale")
def col_scale_kernel(ctx):
    x = ctx.input("X")
    n, d = x.shape
    for j in range(d):
        col = x.T[j]
        col *= j + 1  # expect: OPK001
    ctx.set_output("Out", x.copy())
