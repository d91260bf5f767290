"""elementwise_mul: Out = X * Y with Paddle's axis broadcast."""
from opkit import (OpMaker, OperatorWithKernel, register_operator,
                   register_kernel, grad_var_name)

from reference_ops._common import (XYGradMaker, add_elementwise_proto,
                                   elementwise_infer_shape,
                                   elementwise_grad_infer_shape, broadcast_y, reduce_to_shape)


class ElementwiseMulOpMaker(OpMaker):
    def make(self):
        add_elementwise_proto(self, "elementwise_mul")
        self.add_comment(r"""Elementwise Mul operator.

$$Out = X \odot Y$$
Y is broadcast onto X: its shape must equal a contiguous subsequence of X's
shape starting at `axis` (trailing 1s of Y are ignored, a 1 in Y broadcasts).
""")


class ElementwiseMulOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_infer_shape(ctx)


class ElementwiseMulGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_grad_infer_shape(ctx)


register_operator("elementwise_mul", ElementwiseMulOp, ElementwiseMulOpMaker,
                  grad_maker=XYGradMaker)
register_operator("elementwise_mul_grad", ElementwiseMulGradOp)


@register_kernel("elementwise_mul", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def elementwise_mul_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input("X"), ctx.input("Y")
    yb, _ = broadcast_y(xp, x, y, ctx.attr("axis"))
    ctx.set_output("Out", xp.multiply(x, yb))


@register_kernel("elementwise_mul_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def elementwise_mul_grad_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input("X"), ctx.input("Y")
    dout = ctx.input(grad_var_name("Out"))
    yb, view = broadcast_y(xp, x, y, ctx.attr("axis"))
    if ctx.has_output(grad_var_name("X")):
        ctx.set_output(grad_var_name("X"), xp.multiply(dout, yb))
    if ctx.has_output(grad_var_name("Y")):
        dy = reduce_to_shape(xp, xp.multiply(dout, x), view, y.shape)
        ctx.set_output(grad_var_name("Y"), xp.array(dy, copy=True))
