"""sum_first: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class SumFirstOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("SumFirst operator.")


class SumFirstOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of sum_first should not be null.")
        first = ctx.inputs("X")[0]
        enforce(first.dtype is not None, "Input(X) of sum_first has no dtype.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("sum_first", SumFirstOp, SumFirstOpMaker)

@register_kernel("sum_first")
def sum_first_kernel(ctx):
    xs = ctx.inputs("X")
    acc = xs[0].copy()
    for t in xs[1:]:
        acc += t
    ctx.set_output("Out", acc)
