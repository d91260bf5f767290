"""fill_any_like: a tensor of X's shape, filled with a value (the loss gradient's seed)."""
import math

import numpy as np

from opkit.framework.dtypes import finfo, is_float

from opkit import (OpKernelType, OpMaker, OperatorWithKernel, enforce, errors, register_kernel,
                   register_operator)
from reference_ops._dtype import dtype_attr_converter


class FillAnyLikeOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The tensor whose shape and dtype Out takes.")
        self.add_output("Out", "(Tensor) A tensor of X's shape filled with value.")
        self.add_attr("value", "float", "(float) The value to fill with.", default=0.0)
        self.add_attr("dtype", "string", "(string, default \"\") Out's data type; empty (or "
                      "Paddle's -1) means X's. Paddle's VarType number is accepted too.",
                      default="").set_converter(
                          lambda v: dtype_attr_converter(v, allow_minus_one=True))
        self.add_comment(r"FillAnyLike operator. $$Out = value \cdot \mathbf{1}_{shape(X)}$$")


class FillAnyLikeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")
        if ctx.attr("dtype"):
            ctx.set_output_dtype("Out", ctx.attr("dtype"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(ctx.attr("dtype") or self.indicate_var_data_type(ctx, "X"),
                            ctx.place)


register_operator("fill_any_like", FillAnyLikeOp, FillAnyLikeOpMaker)

FILL_TYPES = ("float32", "float64", "int32", "int64")


@register_kernel("fill_any_like", place=("CPU", "GPU"), dtypes=FILL_TYPES)
def fill_any_like_kernel(ctx):
    x = ctx.input_tensor("X")
    dtype = np.dtype(ctx.attr("dtype") or x.dtype)
    value = ctx.attr("value")
    info = np.iinfo(dtype) if dtype.kind in "iu" else finfo(dtype)
    enforce(not math.isnan(value) and (math.isinf(value) and is_float(dtype)
                                       or float(info.min) <= value <= float(info.max)),
            errors.InvalidArgument(
                "fill_any_like: the value %s is out of range for the output's dtype %s "
                "(or nan)", value, dtype.name))
    ctx.set_output("Out", ctx.xp.full(x.shape, value, dtype=dtype))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, split  # noqa: E402

# each device fills its slice (no partial_sum: n devices would sum n values)
register_sbp("fill_any_like", Signature({"X": split("i"), "Out": split("i")}, each="X"))
