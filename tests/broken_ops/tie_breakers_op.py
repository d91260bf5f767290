"""Broken ops at a tie between two inputs (the `kinks` variant puts X[0] = Y[0] = 0) and
their correct twins (tests/broken_ops/README.md):

| op | bug | fails |
|---|---|---|
| broken_tie_max | max(X, Y)'s grad gives X a quarter of dOut at a tie (neither slope nor the even split) | kinks |
| broken_tie_relu_sum | relu(X) + relu(Y)'s grad gives half of dOut at 0: X = Y = 0 is no tie of the two (moving both together still kinks) | kinks |

good_tie_max splits dOut evenly at a tie (Paddle's and torch.maximum's convention): the
midpoint subgradient `kinks` accepts at a tie between two inputs.
"""
import numpy as np

from opkit import (
    GradOpMaker,
    OperatorWithKernel,
    OpMaker,
    grad_var_name,
    register_kernel,
    register_operator,
)


class BinaryMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) first input.")
        self.add_input("Y", "(Tensor) second input, X's shape.")
        self.add_output("Out", "(Tensor) output.")
        self.add_comment("an elementwise function of X and Y")


class BinaryOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class BinaryGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        for name in ("X", "Y"):
            if ctx.has_output(grad_var_name(name)):
                ctx.set_output_dim(grad_var_name(name), ctx.get_input_dim(name))


def _grad_maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input("X", self.input("X"))
            op.set_input("Y", self.input("Y"))
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            op.set_output(grad_var_name("Y"), self.input_grad("Y"))
            return [op]
    return Maker


for _name in ("tie_max", "tie_relu_sum"):
    for _kind in ("broken", "good"):
        _t = f"{_kind}_{_name}"
        register_operator(_t, BinaryOp, BinaryMaker, grad_maker=_grad_maker(_t + "_grad"))
        register_operator(_t + "_grad", BinaryGradOp)


def _set_grads(ctx, dx, dy):
    dout = ctx.input(grad_var_name("Out"))
    for name, d in (("X", dx), ("Y", dy)):
        if ctx.has_output(grad_var_name(name)):
            ctx.set_output(grad_var_name(name), (dout * d).astype(dout.dtype))


@register_kernel("broken_tie_max")
@register_kernel("good_tie_max")
def tie_max(ctx):
    ctx.set_output("Out", np.maximum(ctx.input("X"), ctx.input("Y")))


@register_kernel("good_tie_max_grad")
def good_tie_max_grad(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    _set_grads(ctx, (x > y) + 0.5 * (x == y), (y > x) + 0.5 * (x == y))


@register_kernel("broken_tie_max_grad")
def broken_tie_max_grad(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    _set_grads(ctx, (x > y) + 0.25 * (x == y), (y > x) + 0.75 * (x == y))   # BUG: 1/4, 3/4


@register_kernel("broken_tie_relu_sum")
@register_kernel("good_tie_relu_sum")
def tie_relu_sum(ctx):
    ctx.set_output("Out", np.maximum(ctx.input("X"), 0) + np.maximum(ctx.input("Y"), 0))


@register_kernel("good_tie_relu_sum_grad")
def good_tie_relu_sum_grad(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    _set_grads(ctx, x > 0, y > 0)


@register_kernel("broken_tie_relu_sum_grad")
def broken_tie_relu_sum_grad(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    _set_grads(ctx, (x > 0) + 0.5 * (x == 0), (y > 0) + 0.5 * (y == 0))   # BUG: half at 0
