"""top_k: the k largest entries of the last dimension of X and their indices."""
import numpy as np

from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)


class TopKOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input of top_k op; the top k are taken along its "
                       "last dimension.")
        self.add_output("Out", "(Tensor) The k largest values of each row of X, shape "
                        "[..., k].")
        self.add_output("Indices", "(Tensor, int64) The positions in the last dimension of X "
                        "of the values in Out, shape [..., k].")
        self.add_attr("k", "int", "(int, default 1) Number of top elements to look for along "
                      "the last dimension.", default=1).greater_than(0)
        self.add_comment(r"""Top K operator.

For each row $x$ of X (along the last dimension) Out holds the $k$ largest
values in descending order and Indices their positions:
$$Indices_{i,:} = \operatorname{argsort}_{desc}(X_{i,:})_{0..k-1}, \quad
Out_{i,j} = X_{i, Indices_{i,j}}$$
Equal values keep their order (the lower index comes first); NaN ranks above
every number (as PyTorch's topk and Paddle's top_k). The gradient
scatters dOut back to the selected positions:
$$dX_{i, Indices_{i,j}} = dOut_{i,j}$$, 0 elsewhere.
""")


class TopKOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of TopKOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of TopKOp should not be null.")
        enforce(ctx.has_output("Indices"), "Output(Indices) of TopKOp should not be null.")
        dims = list(ctx.get_input_dim("X"))
        k = ctx.attr("k")
        enforce(len(dims) >= 1, errors.InvalidArgument(
            "Input(X) of TopKOp should have at least one dimension, but its shape is %s.", dims))
        enforce(dims[-1] < 0 or k <= dims[-1], errors.InvalidArgument(
            "Attr(k) = %d of TopKOp should not exceed the last dimension of Input(X) (shape "
            "%s).", k, dims))
        out = dims[:-1] + [k]
        ctx.set_output_dim("Out", out)
        ctx.set_output_dim("Indices", out)
        ctx.set_output_dtype("Indices", "int64")
        ctx.share_lod("X", "Out")
        ctx.share_lod("X", "Indices")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class TopKGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("top_k_grad")
        op.set_input("X", self.input("X"))
        op.set_input("Indices", self.output("Indices"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class TopKGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of TopKGradOp should not be null.")
        enforce(ctx.has_input("Indices"), "Input(Indices) of TopKGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("top_k", TopKOp, TopKOpMaker, grad_maker=TopKGradMaker)
register_operator("top_k_grad", TopKGradOp, no_need_buffer=["X"])


def _top_k(xp, x, k):
    if xp is np:   # NaN first (above +inf), then descending; stable: ties keep index order
        order = np.lexsort((-x, ~np.isnan(x)), axis=-1)[..., :k]
    else:  # cupy's argsort is a stable sort; NaN as -inf of the key (ties with +inf)
        order = xp.argsort(xp.where(xp.isnan(x), -xp.inf, -x), axis=-1)[..., :k]
    order = order.astype(np.int64)
    return xp.take_along_axis(x, order, axis=-1), order


@register_kernel("top_k", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def top_k_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    k = ctx.attr("k")
    enforce(k <= x.shape[-1], errors.InvalidArgument(
        "Attr(k) = %d of TopKOp should not exceed the last dimension of Input(X) (shape %s).",
        k, list(x.shape)))
    values, indices = _top_k(xp, x, k)
    ctx.set_output("Out", xp.ascontiguousarray(values))
    ctx.set_output("Indices", xp.ascontiguousarray(indices))


@register_kernel("top_k_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def top_k_grad_kernel(ctx):
    xp = ctx.xp
    x_t = ctx.input_tensor("X")
    indices = ctx.input("Indices")
    dout = ctx.input(grad_var_name("Out"))
    dx = xp.zeros(tuple(x_t.shape), dtype=dout.dtype)
    if xp is np:
        np.put_along_axis(dx, indices.astype(np.int64), dout, axis=-1)
    else:  # one-hot scatter: works on any array module
        hot = indices[..., :, None] == xp.arange(dx.shape[-1])
        dx = xp.sum(hot * dout[..., :, None], axis=-2).astype(dout.dtype)
    ctx.set_output(grad_var_name("X"), dx)


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

# every row on its own: any axis but the last (the one the top k are taken along)
_ROWS = Where("i < rank(X) - 1", lambda c, i: i < c.ndim("X") - 1)
register_sbp("top_k", Signature({"X": split("i"), "Out": split("i"), "Indices": split("i")},
                                each="X", where=_ROWS))
register_sbp("top_k_grad", Signature({"X": split("i"), "Indices": split("i"),
                                      G("Out"): split("i"), G("X"): split("i")},
                                     each="X", where=_ROWS))
