"""clip: Out = min(max(X, min), max)."""
from opkit import (OpMaker, OperatorWithKernel, register_operator, register_kernel,
                   GradOpMaker, grad_var_name, enforce, enforce_lt, errors)


class ClipOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input of clip op.")
        self.add_output("Out", "(Tensor) The output of clip op.")
        self.add_attr("min", "float", "(float) Minimum value.")
        self.add_attr("max", "float", "(float) Maximum value.")
        self.add_comment(r"Clip operator. $$Out = \min(\max(X, min), max)$$")


class ClipOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of ClipOp should not be null.")
        enforce_lt(ctx.attr("min"), ctx.attr("max"),
                   errors.InvalidArgument("max (%s) should be greater than min (%s).",
                                          ctx.attr("max"), ctx.attr("min")))
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class ClipGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("clip_grad")          # attrs are copied
        op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class ClipGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))


register_operator("clip", ClipOp, ClipOpMaker, grad_maker=ClipGradMaker)
register_operator("clip_grad", ClipGradOp)


@register_kernel("clip", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def clip_kernel(ctx):
    xp = ctx.xp                                      # numpy on CPU, cupy on GPU
    x = ctx.input("X")
    t = x.dtype.type
    ctx.set_output("Out", xp.clip(x, t(ctx.attr("min")), t(ctx.attr("max"))))


@register_kernel("clip_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def clip_grad_kernel(ctx):
    xp = ctx.xp
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    mask = (x > ctx.attr("min")) & (x < ctx.attr("max"))
    ctx.set_output(grad_var_name("X"), xp.where(mask, dout, xp.zeros_like(dout)))
