"""zero_head_copy: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class ZeroHeadCopyOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ZeroHeadCopy operator.")


class ZeroHeadCopyOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of zero_head_copy should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("zero_head_copy", ZeroHeadCopyOp, ZeroHeadCopyOpMaker)

def _zero_rec(a, depth):
    if depth <= 0:
        return
    a[0] = 0
    _zero_rec(a[1:], depth - 1)


def _zero_head(a, depth):
    a = a.copy()
    _zero_rec(a, depth)
    return a


@register_kernel("zero_head_copy")
def zero_head_copy_kernel(ctx):
    ctx.set_output("Out", _zero_head(ctx.input("X"), ctx.attr("depth")))
