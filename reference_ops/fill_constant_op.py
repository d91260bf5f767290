"""fill_constant: a tensor of the given shape filled with one value."""
import numpy as np

from opkit import (OpMaker, OperatorWithKernel, OpKernelType, register_operator,
                   register_kernel, enforce, errors)
from opkit.framework.tensor import SelectedRows
from reference_ops._extra import add_extra_attrs
from reference_ops._dtype import dtype_attr_converter
from reference_ops._tensor_attr import (add_shape_tensor_inputs, creation_shape,
                                         infer_creation_shape, scalar_input)

_DTYPES = ("float32", "float64", "int32", "int64", "bool", "float16", "bfloat16")


class FillConstantOpMaker(OpMaker):
    def make(self):
        add_shape_tensor_inputs(self)
        self.add_input("ValueTensor", "(Tensor, optional) The value to fill with, shape [1]; "
                       "it takes priority over attr value.").as_dispensable()
        self.add_output("Out", "(Tensor) Tensor of the specified shape filled with `value`.")
        self.add_attr("shape", "ints", "(list<int>, default []) The shape of the output.",
                      default=[])
        self.add_attr("value", "float", "(float, default 0.0) The value to fill with."
                      ).set_default(0.0)
        self.add_attr("dtype", "string", "(string, default float32) The data type of the output "
                      "(Paddle's VarType number, e.g. 5 for float32, is accepted too)."
                      ).set_converter(dtype_attr_converter).set_default("float32").in_set(
                          list(_DTYPES))
        self.add_attr("str_value", "string", "(string, default \"\") The value as text (e.g. "
                      "\"1e-40\", \"inf\", a large int64); when not empty it takes priority "
                      "over attr value.", default="")
        add_extra_attrs(self, "force_cpu")
        self.add_comment(r"""FillConstant operator.

Fills a tensor of shape `shape` and type `dtype` with the constant `value`:
$$Out_{i} = value \quad \forall i$$
""")


class FillConstantOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_output("Out"), "Output(Out) of FillConstantOp should not be null.")
        shape = infer_creation_shape(ctx, "fill_constant")
        if shape is not None:
            ctx.set_output_dim("Out", shape)
        # the program's Out has the kernel's dtype (issue 36, law 1: `describe`)
        ctx.set_output_dtype("Out", ctx.attr("dtype"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(ctx.attr("dtype"), ctx.place)


register_operator("fill_constant", FillConstantOp, FillConstantOpMaker)


def _parse_value(text: str, dtype: str):
    """str_value as a number of the output's kind (ints stay exact, as int64 needs)."""
    try:
        if np.dtype(dtype).kind in "iu" and text.strip().lstrip("+-").isdigit():
            return int(text)
        return float(text)
    except ValueError:
        raise errors.InvalidArgument("Attr(str_value) %r of fill_constant is not a number",
                                     text) from None


@register_kernel("fill_constant", place=("CPU", "GPU"), dtypes=_DTYPES)
def fill_constant_kernel(ctx):
    xp = ctx.xp
    shape = creation_shape(ctx, "fill_constant")
    value = ctx.attr("value")
    if ctx.attr("str_value"):
        value = _parse_value(ctx.attr("str_value"), ctx.attr("dtype"))
    value = scalar_input(ctx, "ValueTensor", value)
    out = xp.full(shape, value, dtype=ctx.attr("dtype"))
    var = ctx.output_var("Out")
    rows = var.value() if var is not None else None
    if isinstance(rows, SelectedRows):     # as Paddle: Out a SelectedRows fills its value
        rows.value.set(out, ctx.place)
        return
    ctx.set_output("Out", out)
