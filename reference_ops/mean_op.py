"""mean: the average of all elements of X."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce)


class MeanOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input of mean op.")
        self.add_output("Out", "(Tensor) The output of mean op, of shape [1].")
        self.add_comment(r"""Mean Operator.

Out is a scalar (shape [1]) holding the average of all elements of X:
$$Out = \frac{1}{numel(X)} \sum_{i} X_{i}$$
""")


class MeanOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of MeanOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of MeanOp should not be null.")
        ctx.set_output_dim("Out", [1])


class MeanGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("mean_grad")
        op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class MeanGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of MeanGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))


register_operator("mean", MeanOp, MeanOpMaker, grad_maker=MeanGradMaker)
register_operator("mean_grad", MeanGradOp, no_need_buffer=["X"])


@register_kernel("mean", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def mean_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    ctx.set_output("Out", xp.reshape(xp.mean(x), (1,)).astype(x.dtype))


@register_kernel("mean_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def mean_grad_kernel(ctx):
    xp = ctx.xp
    x_t = ctx.input_tensor("X")
    dout = ctx.input(grad_var_name("Out"))
    shape = tuple(int(d) for d in x_t.shape)
    n = 1
    for d in shape:
        n *= d
    value = xp.reshape(dout, (-1,))[0] / max(n, 1)
    ctx.set_output(grad_var_name("X"), xp.full(shape, value, dtype=dout.dtype))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, broadcast, partial_sum  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

# linear, but no split: the mean of a slice divides by the slice's size, and the gradient
# divides by the number of elements each device sees
register_sbp("mean", Signature({"X": partial_sum, "Out": partial_sum}))
register_sbp("mean_grad", Signature({"X": broadcast, G("Out"): partial_sum, G("X"): partial_sum}))
