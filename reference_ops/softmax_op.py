"""softmax along one axis."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce)
from reference_ops._extra import add_extra_attrs
from reference_ops._common import normalize_axis
from opkit.framework import domains as D


class SoftmaxOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input tensor of softmax.")
        self.add_output("Out", "(Tensor) The normalized values, same shape and LoD as X.")
        self.add_attr("axis", "int", "(int, default -1) The dimension index of Input(x) to "
                      "perform softmax along; -1 is the last dimension.").set_default(-1)
        add_extra_attrs(self, "use_cudnn", "use_mkldnn", "data_format", "is_test",
                        "mkldnn_data_type")
        # declared domains (docs/domains.md)
        self.proto.attr("axis").set_domain(D.axis_of("X"))
        self.add_comment(r"""Softmax Operator.

Normalizes X along `axis` into a probability distribution:
$$Out[i, j] = \frac{\exp(X[i, j])}{\sum_{k} \exp(X[i, k])}$$
(computed as exp(X - max(X)) for numerical stability).
""")


class SoftmaxOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SoftmaxOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SoftmaxOp should not be null.")
        dims = list(ctx.get_input_dim("X"))
        normalize_axis(ctx.attr("axis"), max(len(dims), 1))   # a 0-D X takes axis -1 or 0
        ctx.set_output_dim("Out", dims)
        ctx.share_lod("X", "Out")


class SoftmaxGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("softmax_grad")
        op.set_input("Out", self.output("Out"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class SoftmaxGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("Out"), "Input(Out) of SoftmaxGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of SoftmaxGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("Out"))
        ctx.share_lod("Out", grad_var_name("X"))


register_operator("softmax", SoftmaxOp, SoftmaxOpMaker, grad_maker=SoftmaxGradMaker)


def _axis(ctx, ndim):
    """The softmax axis; None for a 0-D X (its softmax is 1, as in Paddle 2)."""
    axis = normalize_axis(ctx.attr("axis"), max(ndim, 1))
    return None if ndim == 0 else axis


# the GPU kernel of softmax is a dedicated cupy kernel: reference_ops/gpu/
@register_kernel("softmax", place="CPU", dtypes=("float32", "float64"))
def softmax_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    axis = _axis(ctx, x.ndim)
    if x.size == 0:
        ctx.set_output("Out", xp.zeros_like(x))
        return
    e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    ctx.set_output("Out", e / xp.sum(e, axis=axis, keepdims=True))


@register_kernel("softmax_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def softmax_grad_kernel(ctx):
    xp = ctx.xp
    out, dout = ctx.input("Out"), ctx.input(grad_var_name("Out"))
    axis = _axis(ctx, out.ndim)
    ctx.set_output(grad_var_name("X"),
                   out * (dout - xp.sum(dout * out, axis=axis, keepdims=True)))


# -- softmax_grad_grad: dX = Out * (DOut - sum(DOut * Out)) along axis. With DDX flowing into
# dX: DDOut = Out * (DDX - sum(DDX * Out)) (dX is linear in DOut) and
# DOutNew = DDX * (DOut - sum(DOut * Out)) - DOut * sum(DDX * Out), the gradient of Out.
class SoftmaxDoubleGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("softmax_grad_grad")
        op.set_input("Out", self.input("Out"))
        op.set_input("DOut", self.input(grad_var_name("Out")))
        op.set_input("DDX", self.output_grad(grad_var_name("X")))
        op.set_output("DDOut", self.input_grad(grad_var_name("Out")))
        op.set_output("DOutNew", self.input_grad("Out"))
        return [op]


class SoftmaxDoubleGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("DDX"), "Input(DDX) of SoftmaxDoubleGradOp should not be null.")
        for slot in ("DDOut", "DOutNew"):
            if ctx.has_output(slot):
                ctx.set_output_dim(slot, ctx.get_input_dim("Out"))
                ctx.share_lod("Out", slot)


register_operator("softmax_grad", SoftmaxGradOp, grad_maker=SoftmaxDoubleGradMaker)
register_operator("softmax_grad_grad", SoftmaxDoubleGradOp)


@register_kernel("softmax_grad_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def softmax_grad_grad_kernel(ctx):
    xp = ctx.xp
    out, dout, ddx = ctx.input("Out"), ctx.input("DOut"), ctx.input("DDX")
    axis = _axis(ctx, out.ndim)
    # (0-D: axis None sums the one element, as softmax_grad does)
    s_dd = xp.sum(ddx * out, axis=axis, keepdims=True)
    if ctx.has_output("DDOut"):
        ctx.set_output("DDOut", out * (ddx - s_dd))
    if ctx.has_output("DOutNew"):
        s_d = xp.sum(dout * out, axis=axis, keepdims=True)
        ctx.set_output("DOutNew", ddx * (dout - s_d) - dout * s_dd)
# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, broadcast, not_attr_axis, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

# any axis but its own: the normalization needs the whole of that axis on one device
register_sbp("softmax", Signature({"X": split("i"), "Out": split("i")}, each="X",
                                  where=not_attr_axis("axis", of="X")))
register_sbp("softmax_grad",
             Signature({"Out": split("i"), G("Out"): split("i"), G("X"): split("i")},
                       each="Out", where=not_attr_axis("axis", of="Out")),
             Signature({"Out": broadcast, G("Out"): partial_sum, G("X"): partial_sum}))
