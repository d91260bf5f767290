"""sum_dtype: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class SumDtypeOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("SumDtype operator.")


class SumDtypeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of sum_dtype should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        dtype = ctx.inputs("X")[0].dtype  # expect: OPK005
        return dtype


register_operator("sum_dtype", SumDtypeOp, SumDtypeOpMaker)

@register_kernel("sum_dtype")
def sum_dtype_kernel(ctx):
    ctx.set_output("Out", sum(t.copy() for t in ctx.inputs("X")))
