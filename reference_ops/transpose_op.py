"""transpose: permutes the dimensions of X."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from reference_ops._extra import add_extra_attrs
from opkit.framework import domains as D


class TransposeOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input tensor, tensors with rank up to 6 are "
                       "supported.")
        self.add_output("Out", "(Tensor) The output tensor.")
        self.add_attr("axis", "ints", "(list<int>) A permutation of [0, rank(X)): dimension i "
                      "of Out is dimension axis[i] of X.")
        add_extra_attrs(self, "use_mkldnn", "data_format")
        # declared domains (docs/domains.md)
        self.proto.attr("axis").set_domain(D.perm_of("X"))
        self.add_comment(r"""Transpose Operator.

Permutes the dimensions of X according to `axis`:
$$Out[i_{axis[0]}, \ldots] \text{ has } shape(Out)_k = shape(X)_{axis[k]}$$
e.g. X of shape [2, 3, 4] with axis = [0, 2, 1] gives Out of shape [2, 4, 3].
""")


def _check_perm(axis, x_dims):
    axis = [int(a) for a in axis]
    enforce(len(axis) == len(x_dims), errors.InvalidArgument(
        "The input tensor's rank (%d, shape %s) should be equal to the length of Attr(axis) "
        "(%d, axis %s) in TransposeOp.", len(x_dims), list(x_dims), len(axis), axis))
    given = axis
    rank = len(axis)
    axis = [a + rank if -rank <= a < 0 else a for a in axis]   # Paddle 2.x: negative axes
    enforce(sorted(axis) == list(range(rank)), errors.InvalidArgument(
        "Attr(axis) %s of TransposeOp should be a permutation of [0, %d).", given, rank))
    return axis


class TransposeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of TransposeOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of TransposeOp should not be null.")
        x_dims = list(ctx.get_input_dim("X"))
        axis = _check_perm(ctx.attr("axis"), x_dims)
        ctx.set_output_dim("Out", [x_dims[a] for a in axis])


class TransposeGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("transpose_grad")
        op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class TransposeGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of TransposeGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of TransposeGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))


register_operator("transpose", TransposeOp, TransposeOpMaker, grad_maker=TransposeGradMaker)
register_operator("transpose_grad", TransposeGradOp, no_need_buffer=["X"])


@register_kernel("transpose", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def transpose_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    axis = _check_perm(ctx.attr("axis"), x.shape)
    ctx.set_output("Out", xp.array(xp.transpose(x, axis), copy=True))


@register_kernel("transpose_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def transpose_grad_kernel(ctx):
    xp = ctx.xp
    dout = ctx.input(grad_var_name("Out"))
    axis = [int(a) for a in ctx.attr("axis")]
    inverse = [0] * len(axis)
    for i, a in enumerate(axis):
        inverse[a] = i
    ctx.set_output(grad_var_name("X"), xp.array(xp.transpose(dout, inverse), copy=True))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G, perm_position  # noqa: E402

register_sbp("transpose",
             Signature({"X": split("i"), "Out": split(perm_position())}, each="X"),
             Signature({"X": partial_sum, "Out": partial_sum}))
register_sbp("transpose_grad",
             Signature({"X": split("i"), G("Out"): split(perm_position()), G("X"): split("i")},
                       each=G("X")),
             Signature({"X": broadcast, G("Out"): partial_sum, G("X"): partial_sum}))
