"""zero_head: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class ZeroHeadOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ZeroHead operator.")


class ZeroHeadOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of zero_head should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("zero_head", ZeroHeadOp, ZeroHeadOpMaker)

def _zero_head(a, depth):
    if depth <= 0:
        return
    a[0] = 0  # expect: OPK001
    _zero_head(a[1:], depth - 1)


@register_kernel("zero_head")
def zero_head_kernel(ctx):
    x = ctx.input("X")
    _zero_head(x, ctx.attr("depth"))
    ctx.set_output("Out", x.copy())
