"""increment: Out = X + step (a loop counter; float and integer kernels)."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, enforce)


class IncrementOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input tensor of increment operator (usually a "
                       "one-element loop counter).")
        self.add_output("Out", "(Tensor) The output tensor of increment operator, of X's "
                        "shape and dtype; it may be the same variable as X.")
        self.add_attr("step", "float", "(float, default 1.0) The amount added to each "
                      "element of X.", default=1.0)
        self.add_comment(r"""Increment operator.

Adds a constant to X, keeping X's dtype (for an integer X the step is
truncated toward zero):
$$Out = X + step$$
Paddle requires X to hold one element (a loop counter); this reference applies
the step element-wise to any shape. The gradient is the identity:
$$dX = dOut$$
""")


class IncrementOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of IncrementOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of IncrementOp should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class IncrementGradMaker(GradOpMaker):
    """dX = dOut: one `scale` op with scale 1.0 (as `sum` does)."""

    def apply(self):
        op = self.new_grad_op("scale")
        op.attrs = {"scale": 1.0, "bias": 0.0, "bias_after_scale": True}
        op.set_input("X", self.output_grad("Out"))
        op.set_output("Out", self.input_grad("X"))
        return [op]


register_operator("increment", IncrementOp, IncrementOpMaker, grad_maker=IncrementGradMaker)


@register_kernel("increment", place=("CPU", "GPU"),
                 dtypes=("float32", "float64", "int32", "int64"))
def increment_kernel(ctx):
    x = ctx.input("X")
    step = ctx.attr("step")
    if x.dtype.kind in "iu":
        step = int(step)
    ctx.set_output("Out", (x + x.dtype.type(step)).astype(x.dtype, copy=False))
