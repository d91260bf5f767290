"""broken_nnb_scale: Out = 3 X; its grad op declares X no_need_buffer but the kernel reads
X's data; good_nnb_scale: the grad kernel reads only X's shape."""
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class NnbScaleOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) 3 X.")
        self.add_comment("Out = 3 X")


class NnbScaleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class NnbScaleGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))


def _maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input("X", self.input("X"))
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            return [op]
    return Maker


for _t in ("broken_nnb_scale", "good_nnb_scale"):
    register_operator(_t, NnbScaleOp, NnbScaleOpMaker, grad_maker=_maker(_t + "_grad"))
    register_operator(_t + "_grad", NnbScaleGradOp, no_need_buffer=["X"])


@register_kernel("broken_nnb_scale", place=("CPU", "GPU"))
@register_kernel("good_nnb_scale", place=("CPU", "GPU"))
def nnb_scale_kernel(ctx):
    ctx.set_output("Out", ctx.input("X") * 3)


@register_kernel("broken_nnb_scale_grad", place=("CPU", "GPU"))
def broken_nnb_scale_grad_kernel(ctx):
    x = ctx.input("X")                               # BUG: X is declared no_need_buffer
    dout = ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), ctx.xp.full_like(x, 3) * dout)


@register_kernel("good_nnb_scale_grad", place=("CPU", "GPU"))
def good_nnb_scale_grad_kernel(ctx):
    shape = ctx.input_tensor("X").shape              # shape only
    dout = ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), (dout * 3).reshape(shape))
