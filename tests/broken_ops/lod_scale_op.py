"""broken_lod_scale: Out = 2 X, but Out loses X's LoD (no share_lod, set_output with an
empty LoD); good_lod_scale keeps it."""
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class LodScaleOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(LoDTensor) input.")
        self.add_output("Out", "(LoDTensor) 2 X, with X's LoD.")
        self.add_comment("Out = 2 X")


class BrokenLodScaleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))   # BUG: no share_lod


class GoodLodScaleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class LodScaleGradOp(OperatorWithKernel):
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


register_operator("broken_lod_scale", BrokenLodScaleOp, LodScaleOpMaker,
                  grad_maker=_maker("broken_lod_scale_grad"))
register_operator("good_lod_scale", GoodLodScaleOp, LodScaleOpMaker,
                  grad_maker=_maker("good_lod_scale_grad"))
register_operator("broken_lod_scale_grad", LodScaleGradOp, no_need_buffer=["X"])
register_operator("good_lod_scale_grad", LodScaleGradOp, no_need_buffer=["X"])


@register_kernel("broken_lod_scale", place=("CPU", "GPU"))
@register_kernel("good_lod_scale", place=("CPU", "GPU"))
def lod_scale_kernel(ctx):
    ctx.set_output("Out", ctx.input("X") * 2)


@register_kernel("broken_lod_scale_grad", place=("CPU", "GPU"))
@register_kernel("good_lod_scale_grad", place=("CPU", "GPU"))
def lod_scale_grad_kernel(ctx):
    ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")) * 2)
