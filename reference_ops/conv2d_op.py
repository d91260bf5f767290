"""conv2d: 2-D convolution (NCHW or NHWC), computed as im2col + GEMM."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from reference_ops._extra import add_extra_attrs
from reference_ops._common import check_pair, pad_hw, paddings4, scatter_windows, windows


class Conv2DOpMaker(OpMaker):
    def make(self):
        self.add_input("Input", "(Tensor) The input tensor of convolution operator, in NCHW "
                       "format: [batch, channels, height, width].")
        self.add_input("Filter", "(Tensor) The filter tensor, in MCHW format: [output "
                       "channels, input channels / groups, filter height, filter width].")
        self.add_output("Output", "(Tensor) The output tensor of convolution operator, in NCHW "
                        "format.")
        self.add_attr("strides", "ints", "(vector<int>, default {1, 1}) The strides (h, w)."
                      ).set_default([1, 1])
        self.add_attr("paddings", "ints", "(vector<int>, default {0, 0}) The zero paddings "
                      "(h, w) or (top, bottom, left, right).").set_default([0, 0])
        self.add_attr("dilations", "ints", "(vector<int>, default {1, 1}) The dilations (h, w)."
                      ).set_default([1, 1])
        self.add_attr("groups", "int", "(int, default 1) The number of groups: input and output "
                      "channels are split into `groups` independent convolutions."
                      ).set_default(1).greater_than(0)
        self.add_attr("padding_algorithm", "string", "(string, default EXPLICIT) EXPLICIT uses "
                      "`paddings`; SAME pads so that the output size is ceil(input / stride) "
                      "(dilations are then taken as 1); VALID uses no padding."
                      ).set_default("EXPLICIT").in_set(["EXPLICIT", "SAME", "VALID"])
        self.add_attr("data_format", "string", "(string, default NCHW) The layout of Input and "
                      "Output: NCHW, or NHWC (channel last); AnyLayout means NCHW. Filter is "
                      "always MCHW.").set_default("NCHW").in_set(["NCHW", "NHWC", "AnyLayout"])
        add_extra_attrs(self, "use_cudnn", "fuse_relu_before_depthwise_conv", "use_mkldnn",
                        "use_quantizer", "mkldnn_data_type", "fuse_relu", "fuse_brelu",
                        "fuse_brelu_threshold", "fuse_activation", "fuse_alpha", "fuse_beta",
                        "fuse_residual_connection", "Scale_in", "Scale_out", "Scale_in_eltwise",
                        "Scale_weights", "force_fp32_output", "workspace_size_MB",
                        "exhaustive_search")
        self.add_comment(r"""Convolution Operator (2-D, NCHW).

$$Output[n, m, y, x] = \sum_{c, i, j} Filter[m, c, i, j] \cdot
  Input_{pad}[n, g \cdot C_g + c, y \cdot s_h + i \cdot d_h, x \cdot s_w + j \cdot d_w]$$
where g is the group of output channel m. Output size:
$$H_{out} = \frac{H_{in} + pad_{top} + pad_{bottom} - (d_h (k_h - 1) + 1)}{s_h} + 1$$
(and likewise for W).
""")


def update_paddings(attr, in_hw, k_hw, strides, dilations):
    """Paddle's UpdatePaddingAndDilation: (top, bottom, left, right) and the dilations after
    padding_algorithm (SAME: pad to ceil(size / stride) with dilation 1; VALID: no padding).
    Sizes that are unknown (-1) get no SAME padding."""
    pads = list(paddings4(attr("paddings")))
    dilations = list(dilations)
    algorithm = attr("padding_algorithm")
    if algorithm == "VALID":
        pads = [0, 0, 0, 0]
    elif algorithm == "SAME":
        for i in range(2):
            size, k, s = int(in_hw[i]), int(k_hw[i]), strides[i]
            if size < 0 or k < 0:
                continue
            out = (size + s - 1) // s
            total = max((out - 1) * s + k - size, 0)
            pads[2 * i], pads[2 * i + 1] = total // 2, total - total // 2
            dilations[i] = 1
    return tuple(pads), dilations


def channel_last(attr) -> bool:
    return attr("data_format") == "NHWC"


def _out_size(size, k, pad, stride, dilation):
    if size < 0 or k < 0:     # an unknown input or filter size: the output size is unknown
        return -1
    return (size + pad - (dilation * (k - 1) + 1)) // stride + 1


class Conv2DOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("Input"), "Input(Input) of ConvOp should not be null.")
        enforce(ctx.has_input("Filter"), "Input(Filter) of ConvOp should not be null.")
        enforce(ctx.has_output("Output"), "Output(Output) of ConvOp should not be null.")
        in_dims = list(ctx.get_input_dim("Input"))
        f_dims = list(ctx.get_input_dim("Filter"))
        last = channel_last(ctx.attr)
        enforce(len(in_dims) == 4, errors.InvalidArgument(
            "Input(Input) of Conv2DOp should be 4-D (%s), but its shape is %s.",
            ctx.attr("data_format"), in_dims))
        given_dims = in_dims
        if last:
            in_dims = [in_dims[0], in_dims[3], in_dims[1], in_dims[2]]
        enforce(len(f_dims) == 4, errors.InvalidArgument(
            "Input(Filter) of Conv2DOp should be 4-D (MCHW), but its shape is %s.", f_dims))
        strides = check_pair(ctx.attr("strides"), "strides")
        dilations = check_pair(ctx.attr("dilations"), "dilations")
        (pt, pb, pl, pr), dilations = update_paddings(ctx.attr, in_dims[2:], f_dims[2:],
                                                      strides, dilations)
        groups = int(ctx.attr("groups"))
        if in_dims[1] >= 0 and f_dims[1] >= 0:
            enforce(in_dims[1] == f_dims[1] * groups, errors.InvalidArgument(
                "The number of input channels (%d, Input shape %s) should equal the filter's "
                "input channels (%d, Filter shape %s) times groups (%d) in Conv2DOp.",
                in_dims[1], given_dims, f_dims[1], f_dims, groups))
        if f_dims[0] >= 0:
            enforce(f_dims[0] % groups == 0, errors.InvalidArgument(
                "The number of output channels (%d, Filter shape %s) should be divisible by "
                "groups (%d) in Conv2DOp.", f_dims[0], f_dims, groups))
        oh = _out_size(in_dims[2], f_dims[2], pt + pb, strides[0], dilations[0])
        ow = _out_size(in_dims[3], f_dims[3], pl + pr, strides[1], dilations[1])
        for name, v, size, k in (("height", oh, in_dims[2], f_dims[2]),
                                 ("width", ow, in_dims[3], f_dims[3])):
            enforce(size < 0 or k < 0 or v > 0, errors.InvalidArgument(
                "Conv2DOp's output %s would be %d: the padded input %s (%d) is smaller than the "
                "dilated filter (filter %s %d, Input shape %s, paddings %s, dilations %s).",
                name, v, name, size, name, k, given_dims, list(ctx.attr("paddings")),
                dilations))
        out = [in_dims[0], oh, ow, f_dims[0]] if last else [in_dims[0], f_dims[0], oh, ow]
        ctx.set_output_dim("Output", out)


class Conv2DGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op(self.fwd_type + "_grad")   # conv2d / depthwise_conv2d
        op.set_input("Input", self.input("Input"))
        op.set_input("Filter", self.input("Filter"))
        op.set_input(grad_var_name("Output"), self.output_grad("Output"))
        op.set_output(grad_var_name("Input"), self.input_grad("Input"))
        op.set_output(grad_var_name("Filter"), self.input_grad("Filter"))
        return [op]


class Conv2DGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Output")),
                "Input(Output@GRAD) of Conv2DGradOp should not be null.")
        if ctx.has_output(grad_var_name("Input")):
            ctx.set_output_dim(grad_var_name("Input"), ctx.get_input_dim("Input"))
        if ctx.has_output(grad_var_name("Filter")):
            ctx.set_output_dim(grad_var_name("Filter"), ctx.get_input_dim("Filter"))


register_operator("conv2d", Conv2DOp, Conv2DOpMaker, grad_maker=Conv2DGradMaker)


def _geometry(ctx, x_shape, w_shape):
    sh, sw = check_pair(ctx.attr("strides"), "strides")
    pads, (dh, dw) = update_paddings(ctx.attr, x_shape[2:], w_shape[2:], (sh, sw),
                                     check_pair(ctx.attr("dilations"), "dilations"))
    kh, kw = int(w_shape[2]), int(w_shape[3])
    oh = _out_size(int(x_shape[2]), kh, pads[0] + pads[1], sh, dh)
    ow = _out_size(int(x_shape[3]), kw, pads[2] + pads[3], sw, dw)
    return (sh, sw, dh, dw, kh, kw, oh, ow), pads


def _cols(xp, x, geo, pads, groups):
    """im2col: [N, groups, C/groups * kh * kw, oh * ow] (a copy)."""
    sh, sw, dh, dw, kh, kw, oh, ow = geo
    pt, pb, pl, pr = pads
    xpad = pad_hw(xp, x, pt, pb, pl, pr)
    win = windows(xp, xpad, kh, kw, sh, sw, dh, dw, oh, ow)
    n, c = x.shape[:2]
    return xp.reshape(win, (n, groups, (c // groups) * kh * kw, oh * ow)), xpad.shape


@register_kernel("conv2d", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def conv2d_kernel(ctx):
    xp = ctx.xp
    x, w = ctx.input("Input"), ctx.input("Filter")
    last = channel_last(ctx.attr)
    if last:
        x = xp.transpose(x, (0, 3, 1, 2))
    groups = int(ctx.attr("groups"))
    geo, pads = _geometry(ctx, x.shape, w.shape)
    oh, ow = geo[6], geo[7]
    cols, _ = _cols(xp, x, geo, pads, groups)
    m = int(w.shape[0])
    k = int(w.shape[1]) * int(w.shape[2]) * int(w.shape[3])   # not -1: m may be 0
    w3 = xp.reshape(w, (groups, m // groups, k))
    out = xp.matmul(w3[None], cols)                       # [N, g, M/g, oh*ow]
    out = xp.reshape(out, (x.shape[0], m, oh, ow))
    ctx.set_output("Output", xp.ascontiguousarray(xp.transpose(out, (0, 2, 3, 1))) if last
                   else out)


@register_kernel("conv2d_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def conv2d_grad_kernel(ctx):
    xp = ctx.xp
    x, w = ctx.input("Input"), ctx.input("Filter")
    dout = ctx.input(grad_var_name("Output"))
    last = channel_last(ctx.attr)
    if last:
        x, dout = xp.transpose(x, (0, 3, 1, 2)), xp.transpose(dout, (0, 3, 1, 2))
    groups = int(ctx.attr("groups"))
    geo, pads = _geometry(ctx, x.shape, w.shape)
    sh, sw, dh, dw, kh, kw, oh, ow = geo
    n, c, h, wd = (int(d) for d in x.shape)
    m = int(w.shape[0])
    d4 = xp.reshape(xp.ascontiguousarray(dout), (n, groups, m // groups, oh * ow))
    k = int(w.shape[1]) * int(w.shape[2]) * int(w.shape[3])   # explicit sizes, never -1:
    w3 = xp.reshape(w, (groups, m // groups, k))               # m or n may be 0
    if ctx.has_output(grad_var_name("Filter")):
        cols, _ = _cols(xp, x, geo, pads, groups)
        # sum over the batch and output positions: [g, M/g, N*L] @ [g, N*L, K]
        a = xp.reshape(xp.transpose(d4, (1, 2, 0, 3)), (groups, m // groups, n * oh * ow))
        b = xp.reshape(xp.transpose(cols, (1, 0, 3, 2)), (groups, n * oh * ow, cols.shape[2]))
        ctx.set_output(grad_var_name("Filter"), xp.reshape(xp.matmul(a, b), w.shape))
    if ctx.has_output(grad_var_name("Input")):
        pt, pb, pl, pr = pads
        dcols = xp.matmul(xp.transpose(w3, (0, 2, 1))[None], d4)   # [N, g, K, L]
        dwin = xp.reshape(dcols, (n, c, kh, kw, oh, ow))
        padded = (n, c, h + pt + pb, wd + pl + pr)
        dxpad = scatter_windows(xp, dwin, padded, kh, kw, sh, sw, dh, dw)
        dx = dxpad[:, :, pt:pt + h, pl:pl + wd]
        if last:
            dx = xp.transpose(dx, (0, 2, 3, 1))
        ctx.set_output(grad_var_name("Input"), xp.array(dx, copy=True, order="C"))


# -- conv2d_grad_grad (Paddle's op): conv2d_grad gives dX = convT(DOut, W) and
# dW = corr(X, DOut), both bilinear; with DDInput, DDFilter flowing into dX, dW:
# DDOutput = conv(DDInput, W) + conv(X, DDFilter), DFilter = corr(DDInput, DOut) (conv2d_grad's
# filter gradient with DDInput as the input), DInput = convT(DOut, DDFilter) (its input
# gradient with DDFilter as the filter). The kernels below reuse conv2d's through _Remapped.
class Conv2DDoubleGradMaker(GradOpMaker):
    def apply(self):
        from opkit.framework.context import EMPTY_VAR_NAME

        op = self.new_grad_op(self.fwd_type + "_grad")   # conv2d_grad -> conv2d_grad_grad
        op.set_input("Input", self.input("Input"))
        op.set_input("Filter", self.input("Filter"))
        op.set_input("DOutput", self.input(grad_var_name("Output")))
        for slot, out in (("DDInput", "Input"), ("DDFilter", "Filter")):
            names = [n for n in self.output(grad_var_name(out)) if n != EMPTY_VAR_NAME]
            if names:
                op.set_input(slot, [grad_var_name(n) for n in names])
        op.set_output("DDOutput", self.input_grad(grad_var_name("Output")))
        op.set_output("DInput", self.input_grad("Input"))
        op.set_output("DFilter", self.input_grad("Filter"))
        return [op]


class Conv2DDoubleGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("DOutput"),
                "Input(DOutput) of Conv2DDoubleGradOp should not be null.")
        for slot, src in (("DDOutput", "DOutput"), ("DInput", "Input"), ("DFilter", "Filter")):
            if ctx.has_output(slot):
                ctx.set_output_dim(slot, ctx.get_input_dim(src))


register_operator("conv2d_grad", Conv2DGradOp, grad_maker=Conv2DDoubleGradMaker)
register_operator("conv2d_grad_grad", Conv2DDoubleGradOp)


class _Remapped:
    """An ExecutionContext view with other arrays as inputs and only `wanted` outputs, whose
    values it keeps (to run conv2d's kernels on DDInput / DDFilter)."""

    def __init__(self, ctx, inputs, wanted):
        self.xp, self._ctx, self._inputs, self._wanted = ctx.xp, ctx, inputs, set(wanted)
        self.outputs = {}

    def attr(self, name):
        return self._ctx.attr(name)

    def input(self, name):
        return self._inputs[name]

    def has_output(self, name):
        return name in self._wanted

    def set_output(self, name, value, lod=None):
        self.outputs[name] = value


@register_kernel("conv2d_grad_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def conv2d_grad_grad_kernel(ctx):
    xp = ctx.xp
    x, w, dout = ctx.input("Input"), ctx.input("Filter"), ctx.input("DOutput")
    ddx = ctx.input("DDInput") if ctx.has_input("DDInput") else None
    ddw = ctx.input("DDFilter") if ctx.has_input("DDFilter") else None
    dx_name, dw_name = grad_var_name("Input"), grad_var_name("Filter")
    if ctx.has_output("DDOutput"):
        ddout = xp.zeros(dout.shape, dtype=dout.dtype)
        for a, b in ((ddx, w), (x, ddw)):
            if a is not None and b is not None:
                sub = _Remapped(ctx, {"Input": a, "Filter": b}, ["Output"])
                conv2d_kernel(sub)
                ddout = ddout + sub.outputs["Output"]
        ctx.set_output("DDOutput", ddout)
    if ctx.has_output("DFilter"):
        dw = xp.zeros(w.shape, dtype=dout.dtype)
        if ddx is not None:
            sub = _Remapped(ctx, {"Input": ddx, "Filter": w, grad_var_name("Output"): dout},
                            [dw_name])
            conv2d_grad_kernel(sub)
            dw = sub.outputs[dw_name]
        ctx.set_output("DFilter", xp.array(dw, copy=True))
    if ctx.has_output("DInput"):
        dx = xp.zeros(x.shape, dtype=dout.dtype)
        if ddw is not None:
            sub = _Remapped(ctx, {"Input": x, "Filter": ddw, grad_var_name("Output"): dout},
                            [dx_name])
            conv2d_grad_kernel(sub)
            dx = sub.outputs[dx_name]
        ctx.set_output("DInput", xp.array(dx, copy=True))
# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G, channel_axis  # noqa: E402

_ONE_GROUP = Where("attr(groups) == 1", lambda c, i: int(c.attr("groups")) == 1)
_C = channel_axis("data_format")
# batch split; with one group also the output channels (Filter's rows) and the input
# channels (a partial sum over them)
register_sbp("conv2d",
             Signature({"Input": split(0), "Filter": broadcast, "Output": split(0)}),
             Signature({"Input": broadcast, "Filter": split(0), "Output": split(_C)},
                       where=_ONE_GROUP),
             Signature({"Input": split(_C), "Filter": split(1), "Output": partial_sum},
                       where=_ONE_GROUP))
register_sbp("conv2d_grad",
             Signature({"Input": split(0), "Filter": broadcast, G("Output"): split(0),
                        G("Input"): split(0), G("Filter"): partial_sum}),
             Signature({"Input": broadcast, "Filter": split(0), G("Output"): split(_C),
                        G("Input"): partial_sum, G("Filter"): split(0)}, where=_ONE_GROUP),
             Signature({"Input": split(_C), "Filter": split(1), G("Output"): broadcast,
                        G("Input"): split(_C), G("Filter"): split(1)}, where=_ONE_GROUP),
             Signature({"Input": broadcast, "Filter": broadcast, G("Output"): partial_sum,
                        G("Input"): partial_sum, G("Filter"): partial_sum}))
