"""relu: Out = max(X, 0)."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce)
from reference_ops._extra import add_extra_attrs


class ReluOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) Input of Relu operator.")
        self.add_output("Out", "(Tensor) Output of Relu operator, same shape and LoD as X.")
        add_extra_attrs(self, "use_mkldnn", "use_cudnn")
        self.add_comment(r"""Relu Activation Operator.

$$Out = \max(X, 0)$$
""")


class ReluOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of ReluOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of ReluOp should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class ReluGradMaker(GradOpMaker):
    """relu_grad needs only Out and dOut (as in Paddle): dX = dOut * (Out > 0)."""

    def apply(self):
        op = self.new_grad_op("relu_grad")
        op.set_input("Out", self.output("Out"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class ReluGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("Out"), "Input(Out) of ReluGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of ReluGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("Out"))
        ctx.share_lod("Out", grad_var_name("X"))


register_operator("relu", ReluOp, ReluOpMaker, grad_maker=ReluGradMaker)
@register_kernel("relu", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def relu_kernel(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", ctx.xp.maximum(x, x.dtype.type(0)))


@register_kernel("relu_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def relu_grad_kernel(ctx):
    xp = ctx.xp
    out, dout = ctx.input("Out"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), xp.where(out > 0, dout, xp.zeros_like(dout)))


# -- relu_grad_grad: dX = dOut * (Out > 0) is linear in dOut and piecewise constant in Out, so
# the gradient of dOut is DDOut = DDX * (Out > 0) and that of Out is zero (Paddle's op).
class ReluDoubleGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("relu_grad_grad")
        op.set_input("Out", self.input("Out"))
        op.set_input("DDX", self.output_grad(grad_var_name("X")))
        op.set_output("DDOut", self.input_grad(grad_var_name("Out")))
        return [op]


class ReluDoubleGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("DDX"), "Input(DDX) of ReluDoubleGradOp should not be null.")
        if ctx.has_output("DDOut"):
            ctx.set_output_dim("DDOut", ctx.get_input_dim("DDX"))
            ctx.share_lod("DDX", "DDOut")


register_operator("relu_grad", ReluGradOp, grad_maker=ReluDoubleGradMaker)
register_operator("relu_grad_grad", ReluDoubleGradOp)


@register_kernel("relu_grad_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def relu_grad_grad_kernel(ctx):
    xp = ctx.xp
    out, ddx = ctx.input("Out"), ctx.input("DDX")
    if ctx.has_output("DDOut"):
        ctx.set_output("DDOut", xp.where(out > 0, ddx, xp.zeros_like(ddx)))
# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from reference_ops._sbp import declare_unary  # noqa: E402

declare_unary("relu", grad_reads=("Out",))
