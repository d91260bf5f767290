"""dropout: randomly zeroes elements of X during training."""
import numpy as np

from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from reference_ops._tensor_attr import scalar_input


class DropoutOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "The input of dropout op.")
        self.add_input("Seed", "(Tensor<int32>, optional) The random seed, shape [1]; it takes "
                       "priority over attrs fix_seed and seed.").as_dispensable()
        self.add_output("Out", "The output of dropout op, same shape and LoD as X.")
        self.add_output("Mask", "(uint8) The random sampled dropout mask (1 keeps the "
                        "element); not produced when is_test is true.").as_intermediate()
        self.add_attr("dropout_prob", "float", "(float, default 0.5) Probability of setting "
                      "units to zero.").set_default(0.5).add_custom_checker(
                          _prob_in_range, "0 <= dropout_prob <= 1")
        self.add_attr("is_test", "bool", "(bool, default false) Set to true for inference "
                      "only.").set_default(False)
        self.add_attr("fix_seed", "bool", "(bool, default false) Use `seed` to make the mask "
                      "reproducible.").set_default(False)
        self.add_attr("seed", "int", "(int, default 0) Dropout random seed, used when "
                      "fix_seed is true.").set_default(0)
        self.add_attr("dropout_implementation", "string",
                      "(string, default downgrade_in_infer) 'downgrade_in_infer': train "
                      "Out = X * Mask, infer Out = X * (1 - dropout_prob); 'upscale_in_train': "
                      "train Out = X * Mask / (1 - dropout_prob), infer Out = X."
                      ).set_default("downgrade_in_infer").in_set(
                          ["downgrade_in_infer", "upscale_in_train"])
        self.add_comment(r"""Dropout Operator.

Training: $$Mask \sim Bernoulli(1 - p), \quad Out = X \odot Mask$$
(divided by $1 - p$ with upscale_in_train). Inference: $$Out = X \cdot (1 - p)$$
with downgrade_in_infer, $Out = X$ with upscale_in_train.
""")


def _prob_in_range(p):
    return 0.0 <= p <= 1.0


class DropoutOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of DropoutOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of DropoutOp should not be null.")
        dims = ctx.get_input_dim("X")
        ctx.set_output_dim("Out", dims)
        if not ctx.attr("is_test") and ctx.has_output("Mask"):
            ctx.set_output_dim("Mask", dims)
            ctx.set_output_dtype("Mask", "uint8")
        ctx.share_lod("X", "Out")


class DropoutGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("dropout_grad")
        op.set_input("Mask", self.output("Mask"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class DropoutGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(not ctx.attr("is_test"), errors.InvalidArgument(
            "GradOp is only callable when is_test is false (dropout in training mode), but "
            "is_test = %s.", ctx.attr("is_test")))
        enforce(ctx.has_input("Mask"), "Input(Mask) of DropoutGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of DropoutGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim(grad_var_name("Out")))
        ctx.share_lod(grad_var_name("Out"), grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("dropout", DropoutOp, DropoutOpMaker, grad_maker=DropoutGradMaker)
register_operator("dropout_grad", DropoutGradOp)


@register_kernel("dropout", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def dropout_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    p = float(ctx.attr("dropout_prob"))
    upscale = ctx.attr("dropout_implementation") == "upscale_in_train"
    if ctx.attr("is_test"):
        out = xp.array(x, copy=True) if upscale else x * x.dtype.type(1.0 - p)
        ctx.set_output("Out", out)
        return
    seed = int(ctx.attr("seed")) if ctx.attr("fix_seed") else None
    seed = scalar_input(ctx, "Seed", seed)
    rng = np.random.default_rng(seed)
    mask = xp.asarray((rng.random(size=x.shape) >= p).astype(np.uint8))
    if upscale:
        out = x * mask * x.dtype.type(1.0 / (1.0 - p)) if p < 1.0 else xp.zeros_like(x)
    else:
        out = x * mask
    ctx.set_output("Out", out.astype(x.dtype, copy=False))
    ctx.set_output("Mask", mask)


@register_kernel("dropout_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def dropout_grad_kernel(ctx):
    xp = ctx.xp
    mask, dout = ctx.input("Mask"), ctx.input(grad_var_name("Out"))
    p = float(ctx.attr("dropout_prob"))
    dx = dout * mask
    if ctx.attr("dropout_implementation") == "upscale_in_train":
        dx = dx * dout.dtype.type(1.0 / (1.0 - p)) if p < 1.0 else xp.zeros_like(dout)
    ctx.set_output(grad_var_name("X"), dx.astype(dout.dtype, copy=False))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, broadcast, partial_sum, split  # noqa: E402

# inference only: a training run draws its mask from one random stream, which the devices
# would draw differently
_TEST = Where("attr(is_test)", lambda c, i: bool(c.attr("is_test")))
register_sbp("dropout",
             Signature({"X": split("i"), "Seed": broadcast, "Out": split("i")}, each="X",
                       where=_TEST),
             Signature({"X": partial_sum, "Seed": broadcast, "Out": partial_sum}, where=_TEST))
# the grad op only applies the recorded mask: any axis, linear in Out@GRAD
register_sbp("dropout_grad",
             Signature({"Mask": split("i"), grad_var_name("Out"): split("i"),
                        grad_var_name("X"): split("i")}, each="Mask"),
             Signature({"Mask": broadcast, grad_var_name("Out"): partial_sum,
                        grad_var_name("X"): partial_sum}))
