"""mul: flatten X and Y to matrices and multiply them."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, enforce_eq, errors)
from reference_ops._extra import add_extra_attrs
from reference_ops._common import XYGradMaker, numel


class MulOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The first input tensor of mul op.")
        self.add_input("Y", "(Tensor) The second input tensor of mul op.")
        self.add_output("Out", "(Tensor) The output tensor of mul op.")
        self.add_attr("x_num_col_dims", "int",
                      "(int, default 1) X is flattened into a matrix of "
                      "prod(X.shape[:x_num_col_dims]) rows.").set_default(1).greater_than(0)
        self.add_attr("y_num_col_dims", "int",
                      "(int, default 1) Y is flattened into a matrix of "
                      "prod(Y.shape[:y_num_col_dims]) rows.").set_default(1).greater_than(0)
        add_extra_attrs(self, "use_mkldnn", "scale_x", "scale_y", "scale_out",
                        "force_fp32_output")
        self.add_comment(r"""Mul operator.

X and Y are flattened to two-dimensional matrices, then multiplied:
$$Out = flatten(X, x\_num\_col\_dims) \cdot flatten(Y, y\_num\_col\_dims)$$
Out has shape X.shape[:x_num_col_dims] + Y.shape[y_num_col_dims:].
Out shares the LoD of X.
""")


class MulOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of MulOp should not be null.")
        enforce(ctx.has_input("Y"), "Input(Y) of MulOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of MulOp should not be null.")
        x_dims = list(ctx.get_input_dim("X"))
        y_dims = list(ctx.get_input_dim("Y"))
        xk, yk = int(ctx.attr("x_num_col_dims")), int(ctx.attr("y_num_col_dims"))
        enforce(len(x_dims) > xk, errors.InvalidArgument(
            "The rank of Input(X) (%d, shape %s) should be greater than "
            "Attr(x_num_col_dims) = %d.", len(x_dims), x_dims, xk))
        enforce(len(y_dims) > yk, errors.InvalidArgument(
            "The rank of Input(Y) (%d, shape %s) should be greater than "
            "Attr(y_num_col_dims) = %d.", len(y_dims), y_dims, yk))
        x_w, y_h = numel(x_dims[xk:]), numel(y_dims[:yk])
        if x_w >= 0 and y_h >= 0:
            enforce_eq(x_w, y_h, errors.InvalidArgument(
                "First matrix's width must be equal with second matrix's height in mul op: "
                "X of shape %s flattened with x_num_col_dims=%d has width %d, Y of shape %s "
                "flattened with y_num_col_dims=%d has height %d.",
                x_dims, xk, x_w, y_dims, yk, y_h))
        ctx.set_output_dim("Out", x_dims[:xk] + y_dims[yk:])
        ctx.share_lod("X", "Out")


class MulGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of MulGradOp should not be null.")
        enforce(ctx.has_input("Y"), "Input(Y) of MulGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of MulGradOp should not be null.")
        if ctx.has_output(grad_var_name("X")):
            ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
            ctx.share_lod("X", grad_var_name("X"))
        if ctx.has_output(grad_var_name("Y")):
            ctx.set_output_dim(grad_var_name("Y"), ctx.get_input_dim("Y"))


register_operator("mul", MulOp, MulOpMaker, grad_maker=XYGradMaker)


def _flat(xp, a, k):
    rows = 1
    for d in a.shape[:k]:
        rows *= int(d)
    cols = 1
    for d in a.shape[k:]:
        cols *= int(d)
    return xp.reshape(a, (rows, cols))


@register_kernel("mul", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def mul_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input("X"), ctx.input("Y")
    xk, yk = int(ctx.attr("x_num_col_dims")), int(ctx.attr("y_num_col_dims"))
    out = xp.matmul(_flat(xp, x, xk), _flat(xp, y, yk))
    ctx.set_output("Out", xp.reshape(out, tuple(x.shape[:xk]) + tuple(y.shape[yk:])))


@register_kernel("mul_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def mul_grad_kernel(ctx):
    xp = ctx.xp
    x, y = ctx.input("X"), ctx.input("Y")
    dout = ctx.input(grad_var_name("Out"))
    xk, yk = int(ctx.attr("x_num_col_dims")), int(ctx.attr("y_num_col_dims"))
    x2, y2 = _flat(xp, x, xk), _flat(xp, y, yk)
    d2 = xp.reshape(dout, (x2.shape[0], y2.shape[1]))
    if ctx.has_output(grad_var_name("X")):
        ctx.set_output(grad_var_name("X"), xp.reshape(xp.matmul(d2, y2.T), x.shape))
    if ctx.has_output(grad_var_name("Y")):
        ctx.set_output(grad_var_name("Y"), xp.reshape(xp.matmul(x2.T, d2), y.shape))


# -- mul_grad_grad: dX = DOut Y^T and dY = X^T DOut (flattened), so with DDX, DDY flowing
# into dX, dY: DDOut = DDX Y + X DDY, DX = DOut DDY^T, DY = DDX^T DOut (Paddle's op).
class MulDoubleGradMaker(GradOpMaker):
    def apply(self):
        from opkit.framework.context import EMPTY_VAR_NAME

        op = self.new_grad_op("mul_grad_grad")
        op.set_input("X", self.input("X"))
        op.set_input("Y", self.input("Y"))
        op.set_input("DOut", self.input(grad_var_name("Out")))
        for slot, out in (("DDX", grad_var_name("X")), ("DDY", grad_var_name("Y"))):
            names = [n for n in self.output(out) if n != EMPTY_VAR_NAME]
            if names:
                op.set_input(slot, [grad_var_name(n) for n in names])
        op.set_output("DDOut", self.input_grad(grad_var_name("Out")))
        op.set_output("DX", self.input_grad("X"))
        op.set_output("DY", self.input_grad("Y"))
        return [op]


class MulDoubleGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("DOut"), "Input(DOut) of MulDoubleGradOp should not be null.")
        for slot, src in (("DDOut", "DOut"), ("DX", "X"), ("DY", "Y")):
            if ctx.has_output(slot):
                ctx.set_output_dim(slot, ctx.get_input_dim(src))


register_operator("mul_grad", MulGradOp, grad_maker=MulDoubleGradMaker)
register_operator("mul_grad_grad", MulDoubleGradOp)


@register_kernel("mul_grad_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def mul_grad_grad_kernel(ctx):
    xp = ctx.xp
    x, y, dout = ctx.input("X"), ctx.input("Y"), ctx.input("DOut")
    xk, yk = int(ctx.attr("x_num_col_dims")), int(ctx.attr("y_num_col_dims"))
    x2, y2 = _flat(xp, x, xk), _flat(xp, y, yk)
    d2 = xp.reshape(dout, (x2.shape[0], y2.shape[1]))
    ddx = xp.reshape(ctx.input("DDX"), x2.shape) if ctx.has_input("DDX") else None
    ddy = xp.reshape(ctx.input("DDY"), y2.shape) if ctx.has_input("DDY") else None
    if ctx.has_output("DDOut"):
        ddout = xp.zeros(d2.shape, dtype=dout.dtype)
        if ddx is not None:
            ddout = ddout + xp.matmul(ddx, y2)
        if ddy is not None:
            ddout = ddout + xp.matmul(x2, ddy)
        ctx.set_output("DDOut", xp.reshape(ddout, dout.shape))
    if ctx.has_output("DX"):
        dx = xp.zeros(x.shape, dtype=dout.dtype) if ddy is None else \
            xp.reshape(xp.matmul(d2, ddy.T), x.shape)
        ctx.set_output("DX", dx)
    if ctx.has_output("DY"):
        dy = xp.zeros(y.shape, dtype=dout.dtype) if ddx is None else \
            xp.reshape(xp.matmul(ddx.T, d2), y.shape)
        ctx.set_output("DY", dy)
# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Axis, Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

_ROWS = Where("i < attr(x_num_col_dims)", lambda c, i: i < int(c.attr("x_num_col_dims")))
_COLS = Where("i >= attr(y_num_col_dims)", lambda c, i: i >= int(c.attr("y_num_col_dims")))
_OUT_COL = Axis("i - attr(y_num_col_dims) + attr(x_num_col_dims)",
                lambda c, i: i - int(c.attr("y_num_col_dims")) + int(c.attr("x_num_col_dims")))
_X_K = Axis("attr(x_num_col_dims)", lambda c, i: int(c.attr("x_num_col_dims")))
# the contracted axes line up one to one: split the first of them on both sides
_K_MATCH = Where("X.shape[attr(x_num_col_dims):] == Y.shape[:attr(y_num_col_dims)]",
                 lambda c, i: tuple(c.shape("X")[int(c.attr("x_num_col_dims")):])
                 == tuple(c.shape("Y")[:int(c.attr("y_num_col_dims"))]))

register_sbp(
    "mul",
    Signature({"X": split("i"), "Y": broadcast, "Out": split("i")}, each="X", where=_ROWS),
    Signature({"X": broadcast, "Y": split("i"), "Out": split(_OUT_COL)}, each="Y", where=_COLS),
    Signature({"X": split(_X_K), "Y": split(0), "Out": partial_sum}, where=_K_MATCH),
    Signature({"X": partial_sum, "Y": broadcast, "Out": partial_sum}),
    Signature({"X": broadcast, "Y": partial_sum, "Out": partial_sum}),
)
register_sbp(
    "mul_grad",
    Signature({"X": split("i"), "Y": broadcast, G("Out"): split("i"), G("X"): split("i"),
               G("Y"): partial_sum}, each="X", where=_ROWS),
    Signature({"X": broadcast, "Y": split("i"), G("Out"): split(_OUT_COL),
               G("X"): partial_sum, G("Y"): split("i")}, each="Y", where=_COLS),
    Signature({"X": split(_X_K), "Y": split(0), G("Out"): broadcast, G("X"): split(_X_K),
               G("Y"): split(0)}, where=_K_MATCH),
    Signature({"X": broadcast, "Y": broadcast, G("Out"): partial_sum, G("X"): partial_sum,
               G("Y"): partial_sum}),
)
