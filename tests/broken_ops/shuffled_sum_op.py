"""broken_shuffled_sum: row sums added in a random order on every run (not bitwise
reproducible); good_shuffled_sum: the same sums in a fixed order."""
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class ShuffledSumOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) [N, M] input.")
        self.add_output("Out", "(Tensor) [N] row sums.")
        self.add_comment("Out[i] = sum_j X[i, j]")


class ShuffledSumOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X")[:1])


class ShuffledSumGradOp(OperatorWithKernel):
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


for _t in ("broken_shuffled_sum", "good_shuffled_sum"):
    register_operator(_t, ShuffledSumOp, ShuffledSumOpMaker, grad_maker=_maker(_t + "_grad"))
    register_operator(_t + "_grad", ShuffledSumGradOp)


def _row_sums(xp, x, order):
    acc = xp.zeros(x.shape[0], dtype=x.dtype)
    for j in order:
        acc = acc + x[:, int(j)]
    return acc


@register_kernel("broken_shuffled_sum", place=("CPU", "GPU"))
def broken_shuffled_sum_kernel(ctx):
    import numpy as np

    x = ctx.input("X")
    ctx.set_output("Out", _row_sums(ctx.xp, x, np.random.permutation(x.shape[1])))  # BUG


@register_kernel("good_shuffled_sum", place=("CPU", "GPU"))
def good_shuffled_sum_kernel(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", _row_sums(ctx.xp, x, range(x.shape[1])))


@register_kernel("broken_shuffled_sum_grad", place=("CPU", "GPU"))
@register_kernel("good_shuffled_sum_grad", place=("CPU", "GPU"))
def shuffled_sum_grad_kernel(ctx):
    x, dout = ctx.input_tensor("X"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), ctx.xp.broadcast_to(dout[:, None], x.shape).copy())
