"""sum: Out = X_0 + X_1 + ... (X duplicable)."""
import numpy as np

from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, SelectedRows, register_operator,
                   register_kernel, enforce, errors)
from reference_ops._extra import add_extra_attrs


class SumOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(vector<Tensor>) The input tensors of sum operator, all of the "
                       "same shape.").as_duplicable()
        self.add_output("Out", "(Tensor) The output tensor of sum operator.")
        add_extra_attrs(self, "use_mkldnn", "mkldnn_data_type")
        self.add_comment(r"""Sum operator.

Adds all the input tensors elementwise (they must have the same shape); Out
shares the LoD of the first input:
$$Out = \sum_{i} X_{i}$$

SelectedRows inputs (sparse gradients): when every input is SelectedRows, Out is
SelectedRows of the same height whose rows are the sorted distinct rows of the
inputs, each value the sum of that row's values over the inputs (Paddle's
MergeAdd; inputs without rows add nothing, and with no rows at all Out has none);
when any input is dense, Out is dense and each SelectedRows input is added row
by row.
""")


class SumOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Inputs(X) of SumOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SumOp should not be null.")
        dims = [list(d) for d in ctx.get_inputs_dim("X")]
        enforce(len(dims) > 0, errors.InvalidArgument(
            "Inputs(X) of SumOp should hold at least one tensor, but received %d.", len(dims)))
        out = list(dims[0])
        for i, d in enumerate(dims[1:], start=1):
            enforce(len(d) == len(out), errors.InvalidArgument(
                "Inputs(X) of SumOp should all have the same shape, but X[0] has shape %s "
                "and X[%d] has shape %s.", dims[0], i, d))
            for k, (a, b) in enumerate(zip(out, d)):
                if a < 0:
                    out[k] = b
                elif b >= 0:
                    enforce(a == b, errors.InvalidArgument(
                        "Inputs(X) of SumOp should all have the same shape, but X[0] has "
                        "shape %s and X[%d] has shape %s.", dims[0], i, d))
        ctx.set_output_dim("Out", out)
        ctx.share_lod("X", "Out")


class SumGradMaker(GradOpMaker):
    """As in Paddle: every input's gradient is Out's gradient, copied by one
    `scale` op (scale 1.0) per input."""

    def apply(self):
        ops = []
        dout = self.output_grad("Out")
        for dx in self.input_grad("X"):
            if not dx or dx == "@EMPTY@":  # no gradient wanted for this input
                continue
            op = self.new_grad_op("scale")
            op.attrs = {}  # a fresh scale op: sum's attrs (its switches) are not scale's
            op.set_input("X", dout)
            op.set_output("Out", [dx])
            op.set_attr("scale", 1.0)
            op.set_attr("bias", 0.0)
            op.set_attr("bias_after_scale", True)
            ops.append(op)
        return ops


register_operator("sum", SumOp, SumOpMaker, grad_maker=SumGradMaker)


def _input_values(ctx) -> list:
    return [ctx.scope.find_var(n).value() for n in ctx.input_names("X")]


def _sum_selected_rows(ctx, values) -> None:
    """Paddle's MergeAdd: Out's rows are the sorted distinct rows of the inputs that have
    rows, each value the sum over the inputs (in input order). Out's SelectedRows object is
    updated in place (a caller may hold it; Out may be X[0])."""
    xp = ctx.xp
    heights = {v.height for v in values}
    enforce(len(heights) == 1, errors.InvalidArgument(
        "Inputs(X) of SumOp are SelectedRows of different heights %s.", sorted(heights)))
    used = [v for v in values if len(v.rows)]
    for v in used:
        enforce(v.value.is_initialized() and int(v.value.shape[0]) == len(v.rows),
                errors.InvalidArgument(
                    "Inputs(X) of SumOp: a SelectedRows input has %d rows but a value of "
                    "shape %s (one value row per row)", len(v.rows),
                    list(v.value.shape) if v.value.is_initialized() else None))
    var = ctx.output_var("Out")
    target = var.value()
    if not isinstance(target, SelectedRows):
        target = SelectedRows()
        var.set_value(target)
    height = heights.pop()
    if not used:
        dtype = next((v.value.data.dtype for v in values if v.value.is_initialized()),
                     np.dtype(ctx.dtype))
        target.rows, target.height = [], height
        target.value.set(xp.zeros((0,), dtype=dtype), ctx.place)
        return
    rows = np.concatenate([np.asarray(v.rows, dtype=np.int64) for v in used])
    data = xp.concatenate([xp.asarray(v.value.data) for v in used], axis=0)
    uniq, inverse = np.unique(rows, return_inverse=True)
    if xp is np:
        merged = np.zeros((len(uniq),) + tuple(data.shape[1:]), dtype=data.dtype)
        np.add.at(merged, inverse, data)        # in input order: deterministic
    else:  # one-hot matmul: deterministic on any array module
        onehot = xp.asarray((inverse[None, :] == np.arange(len(uniq))[:, None])
                            .astype(data.dtype))
        merged = xp.reshape(xp.matmul(onehot, xp.reshape(data, (len(rows), -1))),
                            (len(uniq),) + tuple(data.shape[1:]))
    target.rows, target.height = [int(r) for r in uniq], height
    target.value.set(merged, ctx.place)


# the GPU kernel of sum is a dedicated cupy kernel: reference_ops/gpu/
@register_kernel("sum", place="CPU", dtypes=("float32", "float64", "int32", "int64"))
def sum_kernel(ctx):
    xp = ctx.xp
    values = _input_values(ctx)
    sparse = [isinstance(v, SelectedRows) for v in values]
    if all(sparse):
        _sum_selected_rows(ctx, values)
        return
    if not any(sparse):
        xs = ctx.inputs("X")
        out = xp.array(xs[0], copy=True)
        for x in xs[1:]:       # fixed left-to-right order: deterministic
            out += x
        ctx.set_output("Out", out)
        return
    dense = [v for v, s in zip(values, sparse) if not s]
    out = xp.array(dense[0].data, copy=True)
    for v, s in zip(values, sparse):
        if s:
            rows = xp.asarray(np.asarray(v.rows, dtype=np.int64))
            xp.add.at(out, rows, xp.asarray(v.value.data))  # deterministic, in row order
        elif v is not dense[0]:
            out += v.data
    ctx.set_output("Out", out)


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, partial_sum, split  # noqa: E402

# (its gradient is made of scale ops, which declare their own)
register_sbp("sum",
             Signature({"X": split("i"), "Out": split("i")}, each="Out"),
             Signature({"X": partial_sum, "Out": partial_sum}))
