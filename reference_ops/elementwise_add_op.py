"""elementwise_add: Out = X + Y with Paddle's axis broadcast."""
from opkit import (OpMaker, OperatorWithKernel, register_operator,
                   register_kernel, grad_var_name)

from reference_ops._double_grad import build_elementwise_double_grad
from reference_ops._common import (XYGradMaker, add_elementwise_proto,
                                   elementwise_infer_shape,
                                   elementwise_grad_infer_shape, broadcast_xy, reduce_to_shape,
                                   elementwise_broadcast)


class ElementwiseAddOpMaker(OpMaker):
    def make(self):
        add_elementwise_proto(self, "elementwise_add")
        self.add_comment(r"""Elementwise Add operator.

$$Out = X + Y$$
Broadcasting: the lower-rank input's dims line up with the other's starting at
`axis` (-1: the rank difference; rank(Y) may exceed rank(X)); then each pair of
dims must be equal or one of them 1, and Out takes the larger (either input may
broadcast). Out keeps X's LoD.
""")


class ElementwiseAddOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_infer_shape(ctx)


class ElementwiseAddGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        elementwise_grad_infer_shape(ctx)


register_operator("elementwise_add", ElementwiseAddOp, ElementwiseAddOpMaker,
                  grad_maker=XYGradMaker)
_DoubleGradMaker, _DoubleGradOp = build_elementwise_double_grad("elementwise_add")
register_operator("elementwise_add_grad", ElementwiseAddGradOp, no_need_buffer=["X", "Y"],
                  grad_maker=_DoubleGradMaker)
register_operator("elementwise_add_grad_grad", _DoubleGradOp)


# the GPU kernel of elementwise_add is a dedicated cupy kernel: reference_ops/gpu/
@register_kernel("elementwise_add", place="CPU", dtypes=("float32", "float64"))
def elementwise_add_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input("X"), ctx.input("Y")
    if x.shape == y.shape:   # no broadcast: axis plays no part
        ctx.set_output("Out", xp.add(x, y))
        return
    xb, yb, _, _ = broadcast_xy(xp, x, y, ctx.attr("axis"))
    ctx.set_output("Out", xp.add(xb, yb))


@register_kernel("elementwise_add_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def elementwise_add_grad_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input_tensor("X"), ctx.input_tensor("Y")   # shapes only (no_need_buffer)
    dout = ctx.input(grad_var_name("Out"))
    xv, yv, _ = elementwise_broadcast(x.shape, y.shape, ctx.attr("axis"))
    if ctx.has_output(grad_var_name("X")):
        ctx.set_output(grad_var_name("X"), xp.array(reduce_to_shape(xp, dout, xv, x.shape),
                                                    copy=True))
    if ctx.has_output(grad_var_name("Y")):
        dy = reduce_to_shape(xp, dout, yv, y.shape)
        ctx.set_output(grad_var_name("Y"), xp.array(dy, copy=True))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from reference_ops._sbp import declare_elementwise  # noqa: E402

declare_elementwise("elementwise_add", "both")
