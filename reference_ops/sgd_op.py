"""sgd: ParamOut = Param - LearningRate * Grad (dense or SelectedRows grad)."""
import numpy as np

from opkit import (OpMaker, OperatorWithKernel, OpKernelType, SelectedRows, register_operator,
                   register_kernel, enforce, errors)

from reference_ops._common import numel


class SGDOpMaker(OpMaker):
    def make(self):
        self.add_input("Param", "(Tensor) Input parameter.")
        self.add_input("LearningRate", "(Tensor) Learning rate of SGD, a tensor of one element.")
        self.add_input("Grad", "(Tensor or SelectedRows) Input gradient.")
        self.add_output("ParamOut", "(Tensor) Output parameter, the same variable as Param.")
        self.add_comment(r"""SGD operator.

Updates the parameter with one step of stochastic gradient descent:
$$ParamOut = Param - LearningRate \cdot Grad$$
When Grad is a SelectedRows, only its rows are updated (duplicate rows are
merged by summing first).

When Param is a SelectedRows (a sparse parameter; Paddle 2.x), Grad must be a
SelectedRows too: for each row id of Grad, in order, the value row of Param that
holds id is updated, Param[index of id in Param's rows] -= LearningRate * Grad[i];
a row id Param does not hold is an error. Param's rows and height are kept, and
ParamOut (normally Param's own variable) holds the updated SelectedRows.
""")


class SGDOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("Param"), "Input(Param) of SGDOp should not be null.")
        enforce(ctx.has_input("Grad"), "Input(Grad) of SGDOp should not be null.")
        enforce(ctx.has_input("LearningRate"), "Input(LearningRate) of SGDOp should not be null.")
        enforce(ctx.has_output("ParamOut"), "Output(ParamOut) of SGDOp should not be null.")
        lr_dims = list(ctx.get_input_dim("LearningRate"))
        lr_n = numel(lr_dims)
        enforce(lr_n < 0 or lr_n == 1, errors.InvalidArgument(
            "Input(LearningRate) of SGDOp should hold exactly one element, but its shape is %s "
            "(%d elements).", lr_dims, lr_n))
        param_dims = list(ctx.get_input_dim("Param"))
        if ctx.is_runtime() and not _holds_selected_rows(ctx, "Param"):
            grad_dims = list(ctx.get_input_dim("Grad"))
            enforce(grad_dims == param_dims, errors.InvalidArgument(
                "Input(Grad) of SGDOp should have the same shape as Input(Param), but Param has "
                "shape %s and Grad has shape %s.", param_dims, grad_dims))
        ctx.set_output_dim("ParamOut", param_dims)

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "Param"), ctx.place)


register_operator("sgd", SGDOp, SGDOpMaker, inplace={"Param": "ParamOut"})


def _holds_selected_rows(ctx, slot: str) -> bool:
    """At run time: the variable of input `slot` holds a SelectedRows (a sparse Param has
    no dense shape to compare Grad's with: Grad's rows index Param's rows)."""
    names = ctx.input_names(slot)
    var = ctx.scope.find_var(names[0]) if names else None
    return var is not None and isinstance(var.value(), SelectedRows)


def _merge_rows(xp, rows, values):
    """Sum the rows of `values` that share a row index: (unique_rows, merged_values).
    Deterministic: np.add.at accumulates in index order."""
    rows = np.asarray(rows, dtype=np.int64)
    uniq, inverse = np.unique(rows, return_inverse=True)
    merged = xp.zeros((len(uniq),) + tuple(values.shape[1:]), dtype=values.dtype)
    if xp is np:
        np.add.at(merged, inverse, values)
    else:  # one-hot matmul: deterministic on any array module
        onehot = xp.asarray((inverse[None, :] == np.arange(len(uniq))[:, None])
                            .astype(values.dtype))
        merged = xp.reshape(xp.matmul(onehot, xp.reshape(values, (len(rows), -1))),
                            merged.shape)
    return xp.asarray(uniq), merged


@register_kernel("sgd", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sgd_kernel(ctx):
    xp = ctx.xp
    param = ctx.input("Param")
    lr = xp.reshape(ctx.input("LearningRate"), (-1,))[0].astype(param.dtype)
    grad_var = ctx.input_var("Grad")
    grad_value = grad_var.value() if grad_var is not None else None
    param_value = ctx.input_var("Param").value()
    if isinstance(param_value, SelectedRows):
        _sparse_param_sgd(ctx, param_value, grad_value, lr)
        return
    if isinstance(grad_value, SelectedRows):
        values = ctx.input("Grad")
        enforce(int(grad_value.height) == int(param.shape[0]), errors.InvalidArgument(
            "SelectedRows Grad of SGDOp has height %d but Param has %d rows.",
            grad_value.height, param.shape[0]))
        out = xp.array(param, copy=True)
        if len(grad_value.rows):
            rows, merged = _merge_rows(xp, grad_value.rows, values)
            out[rows] -= lr * merged
        ctx.set_output("ParamOut", out)
        return
    grad = ctx.input("Grad")
    ctx.set_output("ParamOut", param - lr * grad)


def _sparse_param_sgd(ctx, param_sr, grad_value, lr) -> None:
    """Paddle's SGD kernel for a SelectedRows Param: each Grad row id updates the value row
    of Param that holds id, in Grad's order (a duplicate id is applied twice, as Paddle's
    loop does). The value is a new array set into ParamOut's SelectedRows (Param's own,
    when ParamOut is Param's variable), so a holder of Param's value tensor sees it."""
    xp = ctx.xp
    enforce(isinstance(grad_value, SelectedRows), errors.InvalidArgument(
        "SGDOp: Param is SelectedRows, so Grad must be SelectedRows too, but Grad holds %s.",
        type(grad_value).__name__))
    param = xp.asarray(param_sr.value.data)
    grad = xp.asarray(grad_value.value.data) if len(grad_value.rows) else None
    out = xp.array(param, copy=True)
    if grad is not None:
        enforce(tuple(grad.shape[1:]) == tuple(param.shape[1:]) and
                int(grad.shape[0]) == len(grad_value.rows), errors.InvalidArgument(
                    "SGDOp: the SelectedRows Grad (%d rows, value shape %s) does not match "
                    "the SelectedRows Param (value shape %s): each Grad row must be one Param "
                    "value row.", len(grad_value.rows), list(grad.shape), list(param.shape)))
        position = {int(r): i for i, r in enumerate(param_sr.rows)}
        missing = [int(r) for r in grad_value.rows if int(r) not in position]
        enforce(not missing, errors.InvalidArgument(
            "SGDOp: Grad row %d is not one of the rows %s of the SelectedRows Param.",
            missing[0] if missing else -1, list(param_sr.rows)))
        index = np.array([position[int(r)] for r in grad_value.rows], dtype=np.int64)
        step = lr * grad
        if xp is np:
            np.subtract.at(out, index, step)        # in Grad's order, duplicates too
        else:
            for k, i in enumerate(index.tolist()):
                out[i] -= step[k]
    var = ctx.output_var("ParamOut")
    target = var.value()
    if not isinstance(target, SelectedRows):
        target = SelectedRows()
        var.set_value(target)
    target.rows, target.height = list(param_sr.rows), param_sr.height
    target.value.set(out, ctx.place)


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, broadcast, split  # noqa: E402

# each device updates its slice of the parameter (a dense gradient split the same way)
register_sbp("sgd", Signature({"Param": split("i"), "Grad": split("i"),
                               "LearningRate": broadcast, "ParamOut": split("i")},
                              each="Param"))
