"""transpose2: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class Transpose2OpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("Transpose2 operator.")


class Transpose2Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of transpose2 should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("transpose2", Transpose2Op, Transpose2OpMaker)

def _emit(ctx, name, value):
    ctx.set_output(name, value)  # expect: OPK004


@register_kernel("transpose2")
def transpose2_kernel(ctx):
    x = ctx.input("X")
    _emit(ctx, name="Out", value=x.T)
