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
        if ctx.is_runtime():
            grad_dims = list(ctx.get_input_dim("Grad"))
            enforce(grad_dims == param_dims, errors.InvalidArgument(
                "Input(Grad) of SGDOp should have the same shape as Input(Param), but Param has "
                "shape %s and Grad has shape %s.", param_dims, grad_dims))
        ctx.set_output_dim("ParamOut", param_dims)

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "Param"), ctx.place)


register_operator("sgd", SGDOp, SGDOpMaker, inplace={"Param": "ParamOut"})


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


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, broadcast, split  # noqa: E402

# each device updates its slice of the parameter (a dense gradient split the same way)
register_sbp("sgd", Signature({"Param": split("i"), "Grad": split("i"),
                               "LearningRate": broadcast, "ParamOut": split("i")},
                              each="Param"))
