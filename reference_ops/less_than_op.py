"""less_than: Out = X < Y element-wise (bool)."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, register_operator,
                   register_kernel, enforce)

from reference_ops._common import broadcast_y, elementwise_y_view_shape


class LessThanOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The left-hand side of the comparison.")
        self.add_input("Y", "(Tensor) The right-hand side of the comparison, of X's shape or "
                       "broadcast onto X from `axis` (as in the elementwise ops).")
        self.add_output("Out", "(Tensor, bool) X < Y element-wise, of X's shape.")
        self.add_attr("axis", "int", "(int, default -1) The dimension of X that Y's first "
                      "dimension lines up with; -1: rank(X) - rank(Y).", default=-1)
        self.add_attr("force_cpu", "bool", "(bool, default false) Compute on the CPU even "
                      "when the program runs on a GPU (for loop conditions).",
                      default=False)
        self.add_comment(r"""Less Than operator.

Compares X and Y element-wise (Y broadcast onto X as in the elementwise ops):
$$Out = X < Y$$
Out is a bool tensor of X's shape; it has no gradient.
""")


class LessThanOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of LessThanOp should not be null.")
        enforce(ctx.has_input("Y"), "Input(Y) of LessThanOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of LessThanOp should not be null.")
        x_dims = list(ctx.get_input_dim("X"))
        elementwise_y_view_shape(x_dims, list(ctx.get_input_dim("Y")), ctx.attr("axis"))
        ctx.set_output_dim("Out", x_dims)
        ctx.set_output_dtype("Out", "bool")
        ctx.share_lod("X", "Out")

    def get_expected_kernel_type(self, ctx):
        kt = OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)
        if ctx.attr("force_cpu"):
            from opkit import CPUPlace

            kt = OpKernelType(kt.dtype, CPUPlace())
        return kt


register_operator("less_than", LessThanOp, LessThanOpMaker)


@register_kernel("less_than", place=("CPU", "GPU"),
                 dtypes=("float32", "float64", "int32", "int64"))
def less_than_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input("X"), ctx.input("Y")
    yb, _ = broadcast_y(xp, x, y, ctx.attr("axis"))
    ctx.set_output("Out", xp.less(x, yb))
