"""elementwise_add: Out = X + Y with Paddle's axis broadcast."""
from opkit import (OpMaker, OperatorWithKernel, register_operator,
                   register_kernel, grad_var_name)

from reference_ops._common import (XYGradMaker, add_elementwise_proto,
                                   elementwise_infer_shape,
                                   elementwise_grad_infer_shape, broadcast_y, reduce_to_shape,
                                   elementwise_y_view_shape)


class ElementwiseAddOpMaker(OpMaker):
    def make(self):
        add_elementwise_proto(self, "elementwise_add")
        self.add_comment(r"""Elementwise Add operator.

$$Out = X + Y$$
Y is broadcast onto X: its shape must equal a contiguous subsequence of X's
shape starting at `axis` (trailing 1s of Y are ignored, a 1 in Y broadcasts).
""")


class ElementwiseAddOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_infer_shape(ctx)


class ElementwiseAddGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_grad_infer_shape(ctx)


register_operator("elementwise_add", ElementwiseAddOp, ElementwiseAddOpMaker,
                  grad_maker=XYGradMaker)
register_operator("elementwise_add_grad", ElementwiseAddGradOp, no_need_buffer=["X", "Y"])


# the GPU kernel of elementwise_add is a dedicated cupy kernel: reference_ops/gpu/
@register_kernel("elementwise_add", place="CPU", dtypes=("float32", "float64"))
def elementwise_add_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input("X"), ctx.input("Y")
    yb, _ = broadcast_y(xp, x, y, ctx.attr("axis"))
    ctx.set_output("Out", xp.add(x, yb))


@register_kernel("elementwise_add_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def elementwise_add_grad_kernel(ctx):
    xp = ctx.xp
    x_t, y_t = ctx.input_tensor("X"), ctx.input_tensor("Y")
    dout = ctx.input(grad_var_name("Out"))
    view = elementwise_y_view_shape(x_t.shape, y_t.shape, ctx.attr("axis"))
    if ctx.has_output(grad_var_name("X")):
        ctx.set_output(grad_var_name("X"), xp.array(dout, copy=True))
    if ctx.has_output(grad_var_name("Y")):
        dy = reduce_to_shape(xp, dout, view, y_t.shape)
        ctx.set_output(grad_var_name("Y"), xp.array(dy, copy=True))
