"""broken_shift_add: Out[i] = X[i] + X[i-1] (Out[0] = X[0]), inplace {X: Out} declared, and
the kernel walks forward, reading X[i-1] after writing Out[i-1] (the same memory when the
buffer is reused); good_shift_add walks backward, which is safe in place."""
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class ShiftAddOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) [N, ...] input.")
        self.add_output("Out", "(Tensor) X[i] + X[i-1].")
        self.add_comment("Out[i] = X[i] + X[i-1], Out[0] = X[0]")


class ShiftAddOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class ShiftAddGradOp(OperatorWithKernel):
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


for _t in ("broken_shift_add", "good_shift_add"):
    register_operator(_t, ShiftAddOp, ShiftAddOpMaker, grad_maker=_maker(_t + "_grad"),
                      inplace={"X": "Out"})
    register_operator(_t + "_grad", ShiftAddGradOp)


@register_kernel("broken_shift_add", place=("CPU", "GPU"))
def broken_shift_add_kernel(ctx):
    x = ctx.input("X")
    out = ctx.output_tensor("Out").mutable_data(x.shape, x.dtype)
    for i in range(x.shape[0]):                      # BUG: forward walk is not inplace-safe
        out[i] = x[i] + x[i - 1] if i else x[i]


@register_kernel("good_shift_add", place=("CPU", "GPU"))
def good_shift_add_kernel(ctx):
    x = ctx.input("X")
    out = ctx.output_tensor("Out").mutable_data(x.shape, x.dtype)
    for i in reversed(range(x.shape[0])):            # X[i-1] is still intact when read
        out[i] = x[i] + x[i - 1] if i else x[i]


@register_kernel("broken_shift_add_grad", place=("CPU", "GPU"))
@register_kernel("good_shift_add_grad", place=("CPU", "GPU"))
def shift_add_grad_kernel(ctx):
    dout = ctx.input(grad_var_name("Out"))
    dx = dout.copy()
    dx[:-1] += dout[1:]
    ctx.set_output(grad_var_name("X"), dx)
