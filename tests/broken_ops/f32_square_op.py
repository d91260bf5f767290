"""broken_f32_square: Out = X^2 with float32 kernels only (float64 missing);
good_f32_square: float32 and float64."""
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class F32SquareOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) X^2.")
        self.add_comment("Out = X^2")


class F32SquareOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class F32SquareGradOp(OperatorWithKernel):
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


for _t in ("broken_f32_square", "good_f32_square"):
    register_operator(_t, F32SquareOp, F32SquareOpMaker, grad_maker=_maker(_t + "_grad"))
    register_operator(_t + "_grad", F32SquareGradOp)


def square_kernel(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x * x)


def square_grad_kernel(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), 2 * x * dout)


register_kernel("broken_f32_square", place=("CPU", "GPU"), dtypes="float32")(square_kernel)  # BUG
register_kernel("broken_f32_square_grad", place=("CPU", "GPU"),
                dtypes=("float32", "float64"))(square_grad_kernel)
register_kernel("good_f32_square", place=("CPU", "GPU"))(square_kernel)
register_kernel("good_f32_square_grad", place=("CPU", "GPU"))(square_grad_kernel)
