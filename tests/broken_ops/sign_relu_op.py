"""broken_sign_relu: relu whose gradient has the wrong sign; good_sign_relu: correct."""
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class SignReluOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) max(X, 0).")
        self.add_comment("Out = max(X, 0)")


class SignReluOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class SignReluGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))


def _maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input("X", self.input("X"))
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            return [op]
    return Maker


for _t in ("broken_sign_relu", "good_sign_relu"):
    register_operator(_t, SignReluOp, SignReluOpMaker, grad_maker=_maker(_t + "_grad"))
    register_operator(_t + "_grad", SignReluGradOp)


@register_kernel("broken_sign_relu", place=("CPU", "GPU"))
@register_kernel("good_sign_relu", place=("CPU", "GPU"))
def sign_relu_kernel(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", ctx.xp.maximum(x, 0))


@register_kernel("broken_sign_relu_grad", place=("CPU", "GPU"))
def broken_sign_relu_grad_kernel(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), -dout * (x > 0))        # BUG: wrong sign


@register_kernel("good_sign_relu_grad", place=("CPU", "GPU"))
def good_sign_relu_grad_kernel(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), dout * (x > 0))
