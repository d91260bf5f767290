"""clip: Out = min(max(X, min), max)."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, register_operator, register_kernel,
                   GradOpMaker, grad_var_name, enforce, enforce_le, errors)
from reference_ops._tensor_attr import given, scalar_input


class ClipOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input of clip op.")
        self.add_input("Min", "(Tensor, optional) The minimum, shape [1]; it takes priority "
                       "over attr min.").as_dispensable()
        self.add_input("Max", "(Tensor, optional) The maximum, shape [1]; it takes priority "
                       "over attr max.").as_dispensable()
        self.add_output("Out", "(Tensor) The output of clip op.")
        self.add_attr("min", "float", "(float) Minimum value.")
        self.add_attr("max", "float", "(float) Maximum value.")
        self.add_comment(r"Clip operator. $$Out = \min(\max(X, min), max)$$")


class ClipOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of ClipOp should not be null.")
        if not given(ctx, "Min") and not given(ctx, "Max"):
            enforce_le(ctx.attr("min"), ctx.attr("max"),    # Paddle 2.x: min == max clips
                       errors.InvalidArgument("max (%s) should be greater than min (%s).",
                                              ctx.attr("max"), ctx.attr("min")))
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class ClipGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("clip_grad")          # attrs are copied
        op.set_input("X", self.input("X"))
        for slot in ("Min", "Max"):
            if self.input(slot):
                op.set_input(slot, self.input(slot))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class ClipGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


register_operator("clip", ClipOp, ClipOpMaker, grad_maker=ClipGradMaker)
register_operator("clip_grad", ClipGradOp)


def _bounds(ctx):
    lo = scalar_input(ctx, "Min", ctx.attr("min"))
    hi = scalar_input(ctx, "Max", ctx.attr("max"))
    enforce_le(lo, hi, errors.InvalidArgument("clip: max (%s) should be greater than min (%s).",
                                              hi, lo))
    return lo, hi


@register_kernel("clip", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def clip_kernel(ctx):
    xp = ctx.xp                                      # numpy on CPU, cupy on GPU
    x = ctx.input("X")
    t = x.dtype.type
    lo, hi = _bounds(ctx)
    ctx.set_output("Out", xp.clip(x, t(lo), t(hi)))


@register_kernel("clip_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def clip_grad_kernel(ctx):
    xp = ctx.xp
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    lo, hi = _bounds(ctx)
    mask = (x > lo) & (x < hi)
    ctx.set_output(grad_var_name("X"), xp.where(mask, dout, xp.zeros_like(dout)))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from reference_ops._sbp import declare_unary  # noqa: E402

declare_unary("clip", grad_reads=("X",), extra=("Min", "Max"))
