"""scale: Out = scale * X + bias (or scale * (X + bias))."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce)
from opkit.framework.tensor import SelectedRows
from reference_ops._tensor_attr import scalar_input


class ScaleOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) Input tensor of scale operator.")
        self.add_input("ScaleTensor", "(Tensor, optional) The scaling factor, shape [1]; it "
                       "takes priority over attr scale.").as_dispensable()
        self.add_output("Out", "(Tensor) Output tensor of scale operator, same shape and LoD as X.")
        self.add_attr("scale", "float", "(float, default 1.0) The scaling factor."
                      ).set_default(1.0)
        self.add_attr("bias", "float", "(float, default 0.0) The bias to add.").set_default(0.0)
        self.add_attr("bias_after_scale", "bool",
                      "(bool, default true) Add the bias after scaling (true) or before "
                      "(false).").set_default(True)
        self.add_comment(r"""Scale operator.

If bias_after_scale is true:
$$Out = scale \cdot X + bias$$
else:
$$Out = scale \cdot (X + bias)$$
""")


class ScaleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of ScaleOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of ScaleOp should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class ScaleGradMaker(GradOpMaker):
    """dX = scale * dOut (the bias does not matter)."""

    def apply(self):
        op = self.new_grad_op("scale_grad")
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        if self.input("ScaleTensor"):
            op.set_input("ScaleTensor", self.input("ScaleTensor"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class ScaleGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of ScaleGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim(grad_var_name("Out")))
        ctx.share_lod(grad_var_name("Out"), grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("scale", ScaleOp, ScaleOpMaker, grad_maker=ScaleGradMaker)
register_operator("scale_grad", ScaleGradOp)


@register_kernel("scale", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def scale_kernel(ctx):
    x = ctx.input("X")
    t = x.dtype.type
    scale, bias = t(scalar_input(ctx, "ScaleTensor", ctx.attr("scale"))), t(ctx.attr("bias"))
    if ctx.attr("bias_after_scale"):
        out = x * scale + bias
    else:
        out = (x + bias) * scale
    rows = ctx.input_var("X").value()
    if isinstance(rows, SelectedRows):     # as Paddle: SelectedRows in, SelectedRows out
        var = ctx.output_var("Out")        # (the same rows and height, the value scaled)
        target = var.value()
        if not isinstance(target, SelectedRows):
            target = SelectedRows()
            var.set_value(target)
        target.rows, target.height = list(rows.rows), rows.height
        target.value.set(ctx.xp.array(out, copy=True), ctx.place)
        return
    ctx.set_output("Out", out)


@register_kernel("scale_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def scale_grad_kernel(ctx):
    dout = ctx.input(grad_var_name("Out"))
    scale = scalar_input(ctx, "ScaleTensor", ctx.attr("scale"))
    ctx.set_output(grad_var_name("X"), dout * dout.dtype.type(scale))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

# linear only without a bias: n partial sums would each add it
_NO_BIAS = Where("attr(bias) == 0", lambda c, i: float(c.attr("bias")) == 0.0)
register_sbp("scale",
             Signature({"X": split("i"), "ScaleTensor": broadcast, "Out": split("i")}, each="X"),
             Signature({"X": partial_sum, "ScaleTensor": broadcast, "Out": partial_sum},
                       where=_NO_BIAS))
register_sbp("scale_grad",
             Signature({G("Out"): split("i"), "ScaleTensor": broadcast, G("X"): split("i")},
                       each=G("Out")),
             Signature({G("Out"): partial_sum, "ScaleTensor": broadcast, G("X"): partial_sum}))
