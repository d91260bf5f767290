"""broken_mutate_scale: Out = 2 X, but a helper function then writes to X (reaching past the
read-only view through `.base`); good_mutate_scale: the helper works on a copy."""
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class MutateScaleOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) 2 X.")
        self.add_comment("Out = 2 X")


class MutateScaleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class MutateScaleGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim(grad_var_name("Out")))


def _maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            return [op]
    return Maker


for _t in ("broken_mutate_scale", "good_mutate_scale"):
    register_operator(_t, MutateScaleOp, MutateScaleOpMaker, grad_maker=_maker(_t + "_grad"))
    register_operator(_t + "_grad", MutateScaleGradOp)


def _center(a):
    """Subtract the mean, in place (BUG when `a` is an input: it writes to the input)."""
    buf = a.base if a.base is not None else a     # past the read-only view
    buf -= buf.mean()
    return buf


@register_kernel("broken_mutate_scale", place=("CPU", "GPU"))
def broken_mutate_scale_kernel(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x * 2)
    _center(x)                                     # BUG: mutates Input(X)


@register_kernel("good_mutate_scale", place=("CPU", "GPU"))
def good_mutate_scale_kernel(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x * 2)
    _center(x.copy())


@register_kernel("broken_mutate_scale_grad", place=("CPU", "GPU"))
@register_kernel("good_mutate_scale_grad", place=("CPU", "GPU"))
def mutate_scale_grad_kernel(ctx):
    ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")) * 2)
