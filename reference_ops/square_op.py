"""square: Out = X^2."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce)
from reference_ops._extra import add_extra_attrs


class SquareOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) Input of Square operator.")
        self.add_output("Out", "(Tensor) Output of Square operator, same shape and LoD as X.")
        add_extra_attrs(self, "use_mkldnn", "use_cudnn")
        self.add_comment(r"""Square Activation Operator.

$$Out = X^2$$
""")


class SquareOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SquareOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SquareOp should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class SquareGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("square_grad")
        op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class SquareGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SquareGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of SquareGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))


# -- square_grad_grad: dX = 2 X dOut, so DDOut = 2 X DDX (the gradient of dOut) and
# DX = 2 dOut DDX (the gradient of X), as Paddle's op.
class SquareDoubleGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("square_grad_grad")
        op.set_input("X", self.input("X"))
        op.set_input("DOut", self.input(grad_var_name("Out")))
        op.set_input("DDX", self.output_grad(grad_var_name("X")))
        op.set_output("DX", self.input_grad("X"))
        op.set_output("DDOut", self.input_grad(grad_var_name("Out")))
        return [op]


class SquareDoubleGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("DDX"), "Input(DDX) of SquareDoubleGradOp should not be null.")
        for slot in ("DX", "DDOut"):
            if ctx.has_output(slot):
                ctx.set_output_dim(slot, ctx.get_input_dim("X"))
                ctx.share_lod("X", slot)


register_operator("square", SquareOp, SquareOpMaker, grad_maker=SquareGradMaker)
register_operator("square_grad", SquareGradOp, grad_maker=SquareDoubleGradMaker)
register_operator("square_grad_grad", SquareDoubleGradOp)


@register_kernel("square", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def square_kernel(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", ctx.xp.multiply(x, x))


@register_kernel("square_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def square_grad_kernel(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), dout * (x * x.dtype.type(2)))


@register_kernel("square_grad_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def square_grad_grad_kernel(ctx):
    x, dout, ddx = ctx.input("X"), ctx.input("DOut"), ctx.input("DDX")
    two = x.dtype.type(2)
    if ctx.has_output("DX"):
        ctx.set_output("DX", two * dout * ddx)
    if ctx.has_output("DDOut"):
        ctx.set_output("DDOut", two * x * ddx)
# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from reference_ops._sbp import declare_unary  # noqa: E402

declare_unary("square", grad_reads=("X",))
