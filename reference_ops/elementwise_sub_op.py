"""elementwise_sub: Out = X - Y with Paddle's axis broadcast."""
from opkit import (OpMaker, OperatorWithKernel, register_operator,
                   register_kernel, grad_var_name)

from reference_ops._double_grad import build_elementwise_double_grad
from reference_ops._common import (XYGradMaker, add_elementwise_proto,
                                   elementwise_infer_shape,
                                   elementwise_grad_infer_shape, broadcast_xy, reduce_to_shape,
                                   elementwise_broadcast)


class ElementwiseSubOpMaker(OpMaker):
    def make(self):
        add_elementwise_proto(self, "elementwise_sub")
        self.add_comment(r"""Elementwise Sub operator.

$$Out = X - Y$$
Broadcasting: the lower-rank input's dims line up with the other's starting at
`axis` (-1: the rank difference; rank(Y) may exceed rank(X)); then each pair of
dims must be equal or one of them 1, and Out takes the larger (either input may
broadcast). Out keeps X's LoD.
""")


class ElementwiseSubOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_infer_shape(ctx)


class ElementwiseSubGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_grad_infer_shape(ctx)


register_operator("elementwise_sub", ElementwiseSubOp, ElementwiseSubOpMaker,
                  grad_maker=XYGradMaker)
_DoubleGradMaker, _DoubleGradOp = build_elementwise_double_grad("elementwise_sub")
register_operator("elementwise_sub_grad", ElementwiseSubGradOp, no_need_buffer=["X", "Y"],
                  grad_maker=_DoubleGradMaker)
register_operator("elementwise_sub_grad_grad", _DoubleGradOp)


@register_kernel("elementwise_sub", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def elementwise_sub_kernel(ctx):
    xp = ctx.xp
    xb, yb, _, _ = broadcast_xy(xp, ctx.input("X"), ctx.input("Y"), ctx.attr("axis"))
    ctx.set_output("Out", xp.subtract(xb, yb))


@register_kernel("elementwise_sub_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def elementwise_sub_grad_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input_tensor("X"), ctx.input_tensor("Y")   # shapes only (no_need_buffer)
    dout = ctx.input(grad_var_name("Out"))
    xv, yv, _ = elementwise_broadcast(x.shape, y.shape, ctx.attr("axis"))
    if ctx.has_output(grad_var_name("X")):
        ctx.set_output(grad_var_name("X"), xp.array(reduce_to_shape(xp, dout, xv, x.shape),
                                                    copy=True))
    if ctx.has_output(grad_var_name("Y")):
        dy = reduce_to_shape(xp, dout, yv, y.shape)
        ctx.set_output(grad_var_name("Y"), xp.negative(dy))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from reference_ops._sbp import declare_elementwise  # noqa: E402

declare_elementwise("elementwise_sub", "both")
