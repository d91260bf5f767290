"""fill_constant: a tensor of the given shape filled with one value."""

from opkit import (OpMaker, OperatorWithKernel, OpKernelType, register_operator,
                   register_kernel, enforce, errors)

_DTYPES = ("float32", "float64", "int32", "int64", "bool")


class FillConstantOpMaker(OpMaker):
    def make(self):
        self.add_output("Out", "(Tensor) Tensor of the specified shape filled with `value`.")
        self.add_attr("shape", "ints", "(list<int>) The shape of the output.")
        self.add_attr("value", "float", "(float, default 0.0) The value to fill with."
                      ).set_default(0.0)
        self.add_attr("dtype", "string", "(string, default float32) The data type of the output."
                      ).set_default("float32").in_set(list(_DTYPES))
        self.add_comment(r"""FillConstant operator.

Fills a tensor of shape `shape` and type `dtype` with the constant `value`:
$$Out_{i} = value \quad \forall i$$
""")


class FillConstantOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_output("Out"), "Output(Out) of FillConstantOp should not be null.")
        shape = [int(d) for d in ctx.attr("shape")]
        for i, d in enumerate(shape):
            enforce(d >= 0, errors.InvalidArgument(
                "Attr(shape) of fill_constant should have non-negative dims, but shape[%d] = %d "
                "(shape %s).", i, d, shape))
        ctx.set_output_dim("Out", shape)

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(ctx.attr("dtype"), ctx.place)


register_operator("fill_constant", FillConstantOp, FillConstantOpMaker)


@register_kernel("fill_constant", place=("CPU", "GPU"), dtypes=_DTYPES)
def fill_constant_kernel(ctx):
    xp = ctx.xp
    shape = tuple(int(d) for d in ctx.attr("shape"))
    ctx.set_output("Out", xp.full(shape, ctx.attr("value"), dtype=ctx.attr("dtype")))
