"""batch_norm: normalizes each channel over the batch (and spatial) dimensions."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from reference_ops._extra import add_extra_attrs


class BatchNormOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input tensor, NCHW (or NC, NCL, NCDHW; NHWC-style "
                       "with data_layout = NHWC).")
        self.add_input("Scale", "(Tensor) Scale (gamma), shape [C].")
        self.add_input("Bias", "(Tensor) Bias (beta), shape [C].")
        self.add_input("Mean", "(Tensor) The running mean (global statistics), shape [C]."
                       ).no_gradient("a running statistic: updated by the op, never trained")
        self.add_input("Variance", "(Tensor) The running variance (global statistics), "
                       "shape [C].").no_gradient("a running statistic: updated by the op, "
                                                 "never trained")
        self.add_output("Y", "(Tensor) The normalized output, same shape and LoD as X.")
        self.add_output("MeanOut", "(Tensor) The updated running mean; shares memory with "
                        "Mean.")
        self.add_output("VarianceOut", "(Tensor) The updated running variance; shares memory "
                        "with Variance.")
        self.add_output("SavedMean", "(Tensor) The batch mean, for the gradient."
                        ).as_intermediate()
        self.add_output("SavedVariance", "(Tensor) The batch inverse standard deviation "
                        "1 / sqrt(var + epsilon), for the gradient.").as_intermediate()
        self.add_attr("momentum", "float", "(float, default 0.9) Momentum of the running "
                      "statistics.").set_default(0.9)
        self.add_attr("epsilon", "float", "(float, default 1e-5) Added to the variance for "
                      "numerical stability.").set_default(1e-5)
        self.add_attr("is_test", "bool", "(bool, default false) Inference: normalize with the "
                      "running statistics.").set_default(False)
        self.add_attr("data_layout", "string", "(string, default NCHW) NCHW (channel axis 1) "
                      "or NHWC (channel axis last).").set_default("NCHW").in_set(
                          ["NCHW", "NHWC", "AnyLayout"])
        self.add_attr("use_global_stats", "bool", "(bool, default false) Normalize with the "
                      "running statistics also in training.").set_default(False)
        add_extra_attrs(self, "use_mkldnn", "fuse_with_relu")
        self.add_comment(r"""Batch Normalization.

Training (batch statistics over every axis but the channel one):
$$\mu_B = \frac{1}{m} \sum_i x_i, \quad \sigma_B^2 = \frac{1}{m} \sum_i (x_i - \mu_B)^2$$
$$y_i = \gamma \frac{x_i - \mu_B}{\sqrt{\sigma_B^2 + \epsilon}} + \beta$$
$$MeanOut = momentum \cdot Mean + (1 - momentum) \mu_B, \quad
  VarianceOut = momentum \cdot Variance + (1 - momentum) \sigma_B^2$$
Inference (is_test or use_global_stats) uses Mean and Variance instead of the
batch statistics. SavedVariance holds $1 / \sqrt{\sigma_B^2 + \epsilon}$.
""")


def _channel_axis(layout, rank):
    return rank - 1 if layout == "NHWC" else 1


class BatchNormOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        for slot in ("X", "Scale", "Bias", "Mean", "Variance"):
            enforce(ctx.has_input(slot), "Input(%s) of BatchNormOp should not be null.", slot)
        for slot in ("Y", "MeanOut", "VarianceOut"):
            enforce(ctx.has_output(slot), "Output(%s) of BatchNormOp should not be null.", slot)
        eps = ctx.attr("epsilon")
        enforce(0.0 <= eps <= 0.001, errors.InvalidArgument(
            "Attr(epsilon) of BatchNormOp should be between 0.0 and 0.001, but received %s.",
            eps))
        x_dims = list(ctx.get_input_dim("X"))
        enforce(2 <= len(x_dims) <= 5, errors.InvalidArgument(
            "Input(X) of BatchNormOp should have rank 2 to 5, but its shape is %s.", x_dims))
        c = x_dims[_channel_axis(ctx.attr("data_layout"), len(x_dims))]
        for slot in ("Scale", "Bias", "Mean", "Variance"):
            d = list(ctx.get_input_dim(slot))
            enforce(len(d) == 1 and (c < 0 or d[0] < 0 or d[0] == c), errors.InvalidArgument(
                "Input(%s) of BatchNormOp should have shape [C] = [%d] (X has shape %s, layout "
                "%s), but its shape is %s.", slot, c, x_dims, ctx.attr("data_layout"), d))
        ctx.set_output_dim("Y", x_dims)
        ctx.share_lod("X", "Y")
        ctx.set_output_dim("MeanOut", [c])
        ctx.set_output_dim("VarianceOut", [c])
        ctx.set_output_dim("SavedMean", [c])
        ctx.set_output_dim("SavedVariance", [c])

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class BatchNormGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("batch_norm_grad")
        op.set_input("X", self.input("X"))
        op.set_input("Scale", self.input("Scale"))
        op.set_input("SavedMean", self.output("SavedMean"))
        op.set_input("SavedVariance", self.output("SavedVariance"))
        op.set_input(grad_var_name("Y"), self.output_grad("Y"))
        if self.attrs.get("use_global_stats") or self.attrs.get("is_test"):
            op.set_input("Mean", self.input("Mean"))
            op.set_input("Variance", self.input("Variance"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        op.set_output(grad_var_name("Scale"), self.input_grad("Scale"))
        op.set_output(grad_var_name("Bias"), self.input_grad("Bias"))
        return [op]


class BatchNormGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        for slot in ("X", "Scale", "SavedMean", "SavedVariance", grad_var_name("Y")):
            enforce(ctx.has_input(slot), "Input(%s) of BatchNormGradOp should not be null.",
                    slot)
        if ctx.has_output(grad_var_name("X")):
            ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
            ctx.share_lod("X", grad_var_name("X"))
        for slot in ("Scale", "Bias"):
            if ctx.has_output(grad_var_name(slot)):
                ctx.set_output_dim(grad_var_name(slot), ctx.get_input_dim("Scale"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


register_operator("batch_norm", BatchNormOp, BatchNormOpMaker, grad_maker=BatchNormGradMaker,
                  inplace={"Mean": "MeanOut", "Variance": "VarianceOut"})
register_operator("batch_norm_grad", BatchNormGradOp)


def _bcast(xp, v, axis, rank):
    shape = [1] * rank
    shape[axis] = -1
    return xp.reshape(v, tuple(shape))


@register_kernel("batch_norm", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def batch_norm_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    scale, bias = ctx.input("Scale"), ctx.input("Bias")
    mean, var = ctx.input("Mean"), ctx.input("Variance")
    t = x.dtype.type
    eps, momentum = t(ctx.attr("epsilon")), t(ctx.attr("momentum"))
    axis = _channel_axis(ctx.attr("data_layout"), x.ndim)
    red = tuple(i for i in range(x.ndim) if i != axis)
    global_stats = bool(ctx.attr("is_test") or ctx.attr("use_global_stats"))
    if global_stats:
        use_mean, use_var = mean.astype(x.dtype), var.astype(x.dtype)
        ctx.set_output("MeanOut", xp.array(mean, copy=True))
        ctx.set_output("VarianceOut", xp.array(var, copy=True))
    else:
        use_mean = xp.mean(x, axis=red)
        # squared in float64: float32 squares overflow where the variance itself is finite
        dev = (x - _bcast(xp, use_mean, axis, x.ndim)).astype("float64")
        use_var = xp.mean(xp.square(dev), axis=red).astype(x.dtype)
        ctx.set_output("MeanOut", mean * momentum + use_mean * (t(1) - momentum))
        ctx.set_output("VarianceOut", var * momentum + use_var * (t(1) - momentum))
    inv_std = t(1) / xp.sqrt(use_var + eps)
    ctx.set_output("SavedMean", xp.array(use_mean, copy=True))
    ctx.set_output("SavedVariance", inv_std)
    x_hat = (x - _bcast(xp, use_mean, axis, x.ndim)) * _bcast(xp, inv_std, axis, x.ndim)
    ctx.set_output("Y", x_hat * _bcast(xp, scale, axis, x.ndim) + _bcast(xp, bias, axis, x.ndim))


@register_kernel("batch_norm_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def batch_norm_grad_kernel(ctx):
    xp = ctx.xp
    x, scale = ctx.input("X"), ctx.input("Scale")
    dy = ctx.input(grad_var_name("Y"))
    t = x.dtype.type
    axis = _channel_axis(ctx.attr("data_layout"), x.ndim)
    red = tuple(i for i in range(x.ndim) if i != axis)
    global_stats = bool(ctx.attr("is_test") or ctx.attr("use_global_stats"))
    if global_stats:
        mu = ctx.input("Mean")
        inv_std = t(1) / xp.sqrt(ctx.input("Variance") + t(ctx.attr("epsilon")))
    else:
        mu, inv_std = ctx.input("SavedMean"), ctx.input("SavedVariance")
    b = lambda v: _bcast(xp, v, axis, x.ndim)  # noqa: E731
    x_hat = (x - b(mu)) * b(inv_std)
    dbias = xp.sum(dy, axis=red)
    dscale = xp.sum(dy * x_hat, axis=red)
    if ctx.has_output(grad_var_name("X")):
        if global_stats:
            dx = dy * b(scale * inv_std)
        else:
            m = t(x.size // x.shape[axis]) if x.shape[axis] else t(1)
            dx = b(scale * inv_std / m) * (dy * m - b(dbias) - x_hat * b(dscale))
        ctx.set_output(grad_var_name("X"), dx)
    if ctx.has_output(grad_var_name("Scale")):
        ctx.set_output(grad_var_name("Scale"), dscale)
    if ctx.has_output(grad_var_name("Bias")):
        ctx.set_output(grad_var_name("Bias"), dbias)


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G, channel_axis  # noqa: E402

_C = channel_axis("data_layout")
_PARAMS = ("Scale", "Bias", "Mean", "Variance")
_STATS = ("MeanOut", "VarianceOut", "SavedMean", "SavedVariance")
_GLOBAL = Where("attr(is_test) or attr(use_global_stats)",
                lambda c, i: bool(c.attr("is_test")) or bool(c.attr("use_global_stats")))
# Every channel is normalized on its own: a channel split always holds. A batch split holds
# only with the global statistics (is_test, use_global_stats): in training the batch mean and
# variance would need partial sums of X and X^2 across devices (a cross-device statistic that
# one kernel call cannot give), so no batch split is declared for training.
register_sbp(
    "batch_norm",
    Signature({"X": split(_C), **{p: split(0) for p in _PARAMS}, "Y": split(_C),
               **{s: split(0) for s in _STATS}}),
    Signature({"X": split(0), **{p: broadcast for p in _PARAMS}, "Y": split(0),
               **{s: broadcast for s in _STATS}}, where=_GLOBAL))
_GRAD_IN = ("Scale", "SavedMean", "SavedVariance", "Mean", "Variance")
register_sbp(
    "batch_norm_grad",
    Signature({"X": split(_C), **{p: split(0) for p in _GRAD_IN}, G("Y"): split(_C),
               G("X"): split(_C), G("Scale"): split(0), G("Bias"): split(0)}),
    Signature({"X": split(0), **{p: broadcast for p in _GRAD_IN}, G("Y"): split(0),
               G("X"): split(0), G("Scale"): partial_sum, G("Bias"): partial_sum},
              where=_GLOBAL))
