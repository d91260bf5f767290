"""reshape: gives X a new shape without changing its data."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)


class ReshapeOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input tensor of reshape operator.")
        self.add_output("Out", "(Tensor) The output tensor of reshape operator.")
        self.add_attr("shape", "ints", "(list<int>) The new shape. A 0 copies the dimension of "
                      "X at the same index; at most one -1 is inferred from the number of "
                      "elements.")
        self.add_comment(r"""Reshape Operator.

Out holds the elements of X in the same (row-major) order, with shape `shape`:
$$Out = reshape(X, shape), \quad numel(Out) = numel(X)$$
A 0 in `shape` copies the corresponding dimension of X, one -1 is inferred.
E.g. X of shape [2, 4, 6] with shape = [0, -1] gives Out of shape [2, 24].
""")


def infer_reshape_dims(x_dims, shape):
    """Paddle's ValidateShape: resolve 0 (copy) and -1 (infer). -1 where unknown."""
    x_dims = [int(d) for d in x_dims]
    shape = [int(s) for s in shape]
    enforce(len(shape) > 0, errors.InvalidArgument(
        "Attr(shape) of ReshapeOp should not be empty (X has shape %s).", x_dims))
    out, unk = [], -1
    for i, s in enumerate(shape):
        if s == -1:
            enforce(unk == -1, errors.InvalidArgument(
                "Only one dimension value of Attr(shape) in ReshapeOp can be -1, but "
                "shape[%d] and shape[%d] are both -1 (shape %s).", unk, i, shape))
            unk = i
            out.append(-1)
        elif s == 0:
            enforce(i < len(x_dims), errors.InvalidArgument(
                "shape[%d] = 0 in Attr(shape) of ReshapeOp copies dim %d of X, but X has only "
                "%d dims (shape %s, X shape %s).", i, i, len(x_dims), shape, x_dims))
            out.append(x_dims[i])
        else:
            enforce(s > 0, errors.InvalidArgument(
                "Each dimension value of Attr(shape) in ReshapeOp must not be negative except "
                "one unknown dimension, but shape[%d] = %d (shape %s).", i, s, shape))
            out.append(s)
    x_numel = 1
    for d in x_dims:
        x_numel = -1 if (d < 0 or x_numel < 0) else x_numel * d
    known = 1
    for i, d in enumerate(out):
        if i != unk:
            known = -1 if (d < 0 or known < 0) else known * d
    if x_numel < 0 or known < 0:
        return out  # compile time: unknown dims stay -1
    if unk >= 0:
        enforce(known > 0 and x_numel % known == 0, errors.InvalidArgument(
            "The input of ReshapeOp has %d elements (shape %s), which cannot be reshaped to "
            "%s: %d is not divisible by %d.", x_numel, x_dims, shape, x_numel, known))
        out[unk] = x_numel // known if known else 0
    else:
        enforce(known == x_numel, errors.InvalidArgument(
            "The input of ReshapeOp has %d elements (shape %s), but Attr(shape) %s asks for %d "
            "elements.", x_numel, x_dims, shape, known))
    return out


class ReshapeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of ReshapeOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of ReshapeOp should not be null.")
        out = infer_reshape_dims(ctx.get_input_dim("X"), ctx.attr("shape"))
        ctx.set_output_dim("Out", out)
        x_dims = list(ctx.get_input_dim("X"))
        if x_dims and out and x_dims[0] == out[0]:
            ctx.share_lod("X", "Out")


class ReshapeGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("reshape_grad")
        op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class ReshapeGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of ReshapeGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of ReshapeGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))


register_operator("reshape", ReshapeOp, ReshapeOpMaker, grad_maker=ReshapeGradMaker,
                  inplace={"X": "Out"})
register_operator("reshape_grad", ReshapeGradOp, no_need_buffer=["X"],
                  inplace={grad_var_name("Out"): grad_var_name("X")})


@register_kernel("reshape", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def reshape_kernel(ctx):
    # X -> Out is declared inplace: Out may be a view of X's buffer.
    x = ctx.input("X")
    shape = infer_reshape_dims(x.shape, ctx.attr("shape"))
    ctx.set_output("Out", ctx.xp.reshape(x, tuple(shape)))


@register_kernel("reshape_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def reshape_grad_kernel(ctx):
    # Out@GRAD -> X@GRAD is declared inplace: X@GRAD may be a view of Out@GRAD.
    shape = tuple(int(d) for d in ctx.input_tensor("X").shape)
    dout = ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), ctx.xp.reshape(dout, shape))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Axis, Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G, reshaped_axis  # noqa: E402

_FWD = reshaped_axis("X", "Out")
_BWD = reshaped_axis(G("X"), G("Out"))
register_sbp("reshape",
             Signature({"X": split("i"), "Out": split(Axis("reshaped_axis(i)", _FWD))},
                       each="X",
                       where=Where("reshaped_axis(i) exists", lambda c, i: _FWD(c, i) is not None)),
             Signature({"X": partial_sum, "Out": partial_sum}))
register_sbp("reshape_grad",
             Signature({"X": split("i"), G("Out"): split(Axis("reshaped_axis(i)", _BWD)),
                        G("X"): split("i")}, each=G("X"),
                       where=Where("reshaped_axis(i) exists", lambda c, i: _BWD(c, i) is not None)),
             Signature({"X": broadcast, G("Out"): partial_sum, G("X"): partial_sum}))
