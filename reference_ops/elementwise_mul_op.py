"""elementwise_mul: Out = X * Y with Paddle's axis broadcast."""
from opkit import (OpMaker, OperatorWithKernel, register_operator,
                   register_kernel, grad_var_name)

from reference_ops._double_grad import build_elementwise_double_grad
from reference_ops._common import (XYGradMaker, add_elementwise_proto,
                                   elementwise_infer_shape,
                                   elementwise_grad_infer_shape, broadcast_xy, reduce_to_shape)


class ElementwiseMulOpMaker(OpMaker):
    def make(self):
        add_elementwise_proto(self, "elementwise_mul")
        self.add_comment(r"""Elementwise Mul operator.

$$Out = X \odot Y$$
Broadcasting: the lower-rank input's dims line up with the other's starting at
`axis` (-1: the rank difference; rank(Y) may exceed rank(X)); then each pair of
dims must be equal or one of them 1, and Out takes the larger (either input may
broadcast). Out keeps X's LoD.
""")


class ElementwiseMulOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_infer_shape(ctx)


class ElementwiseMulGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_grad_infer_shape(ctx)


register_operator("elementwise_mul", ElementwiseMulOp, ElementwiseMulOpMaker,
                  grad_maker=XYGradMaker)
_DoubleGradMaker, _DoubleGradOp = build_elementwise_double_grad("elementwise_mul")
register_operator("elementwise_mul_grad", ElementwiseMulGradOp,
                  grad_maker=_DoubleGradMaker)
register_operator("elementwise_mul_grad_grad", _DoubleGradOp)


@register_kernel("elementwise_mul", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def elementwise_mul_kernel(ctx):
    xp = ctx.xp
    xb, yb, _, _ = broadcast_xy(xp, ctx.input("X"), ctx.input("Y"), ctx.attr("axis"))
    ctx.set_output("Out", xp.multiply(xb, yb))


@register_kernel("elementwise_mul_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def elementwise_mul_grad_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input("X"), ctx.input("Y")
    dout = ctx.input(grad_var_name("Out"))
    xb, yb, xv, yv = broadcast_xy(xp, x, y, ctx.attr("axis"))
    if ctx.has_output(grad_var_name("X")):
        dx = reduce_to_shape(xp, xp.multiply(dout, yb), xv, x.shape)
        ctx.set_output(grad_var_name("X"), xp.array(dx, copy=True))
    if ctx.has_output(grad_var_name("Y")):
        dy = reduce_to_shape(xp, xp.multiply(dout, xb), yv, y.shape)
        ctx.set_output(grad_var_name("Y"), xp.array(dy, copy=True))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from reference_ops._sbp import declare_elementwise  # noqa: E402

declare_elementwise("elementwise_mul", "either")
