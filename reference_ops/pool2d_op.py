"""pool2d: 2-D max or average pooling (NCHW)."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from reference_ops._extra import add_extra_attrs
from reference_ops._common import check_pair, paddings4, scatter_windows, windows


class Pool2DOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input tensor of pooling operator, in NCHW format.")
        self.add_output("Out", "(Tensor) The output tensor of pooling operator, in NCHW format.")
        self.add_attr("pooling_type", "string", "(string) Pooling type, \"max\" for max-pooling "
                      "and \"avg\" for average-pooling.").in_set(["max", "avg"])
        self.add_attr("ksize", "ints", "(vector<int>) The pooling window size (height, width); "
                      "ignored when global_pooling is true.")
        self.add_attr("global_pooling", "bool", "(bool, default false) Pool over the whole "
                      "height and width (ksize and paddings are then ignored)."
                      ).set_default(False)
        self.add_attr("strides", "ints", "(vector<int>, default {1, 1}) The strides (height, "
                      "width).").set_default([1, 1])
        self.add_attr("paddings", "ints", "(vector<int>, default {0, 0}) The paddings (height, "
                      "width) or (top, bottom, left, right).").set_default([0, 0])
        self.add_attr("exclusive", "bool", "(bool, default true) For avg pooling, divide by the "
                      "number of non-padding elements in the window instead of the window "
                      "size.").set_default(True)
        self.add_attr("ceil_mode", "bool", "(bool, default false) Use ceil instead of floor to "
                      "compute the output size.").set_default(False)
        add_extra_attrs(self, "use_cudnn", "use_mkldnn", "use_quantizer", "mkldnn_data_type",
                        "is_test")
        self.add_comment(r"""Pool2d Operator.

$$H_{out} = \frac{H_{in} + pad_{top} + pad_{bottom} - k_h}{s_h} + 1$$
(rounded up with ceil_mode), and for each window $W_{y,x}$:
$$Out_{max}[n, c, y, x] = \max_{(i, j) \in W_{y,x}} X[n, c, i, j], \quad
  Out_{avg}[n, c, y, x] = \frac{1}{|W_{y,x}|} \sum_{(i, j) \in W_{y,x}} X[n, c, i, j]$$
where $|W|$ counts only the non-padding elements when exclusive is true.
""")


def _geometry(attrs_get, h, w):
    """(kh, kw, sh, sw, (pt, pb, pl, pr), oh, ow); -1 sizes where h or w is unknown."""
    if attrs_get("global_pooling"):
        kh, kw, pads = h, w, (0, 0, 0, 0)
    else:
        kh, kw = check_pair(attrs_get("ksize"), "ksize")
        pads = paddings4(attrs_get("paddings"))
    sh, sw = check_pair(attrs_get("strides"), "strides")
    ceil = bool(attrs_get("ceil_mode"))

    def out(size, k, pad, s):
        if size < 0 or k < 0:
            return -1
        span = size + pad - k
        return (span + s - 1) // s + 1 if ceil else span // s + 1

    oh = out(h, kh, pads[0] + pads[1], sh)
    ow = out(w, kw, pads[2] + pads[3], sw)
    return kh, kw, sh, sw, pads, oh, ow


class Pool2DOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of Pool2dOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of Pool2dOp should not be null.")
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) == 4, errors.InvalidArgument(
            "Input(X) of Pool2dOp should be 4-D (NCHW), but its shape is %s.", dims))
        kh, kw, sh, sw, pads, oh, ow = _geometry(ctx.attr, dims[2], dims[3])
        for name, v, size in (("height", oh, dims[2]), ("width", ow, dims[3])):
            enforce(size < 0 or v > 0, errors.InvalidArgument(
                "Pool2dOp's output %s would be %d for Input(X) of shape %s with ksize %s, "
                "strides %s and paddings %s.", name, v, dims, [kh, kw], [sh, sw], list(pads)))
        ctx.set_output_dim("Out", [dims[0], dims[1], oh, ow])


class Pool2DGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("pool2d_grad")
        op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class Pool2DGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of Pool2dGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of Pool2dGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))


register_operator("pool2d", Pool2DOp, Pool2DOpMaker, grad_maker=Pool2DGradMaker)
register_operator("pool2d_grad", Pool2DGradOp)


def _padded_windows(xp, x, geo, fill):
    """The windows [N, C, kh, kw, oh, ow] of X padded with `fill`, and the padded shape."""
    kh, kw, sh, sw, (pt, pb, pl, pr), oh, ow = geo
    n, c, h, w = (int(d) for d in x.shape)
    # ceil_mode windows may run past the padding: pad the bottom/right further
    pb2 = max(pb, (oh - 1) * sh + kh - h - pt)
    pr2 = max(pr, (ow - 1) * sw + kw - w - pl)
    xpad = xp.pad(x, ((0, 0), (0, 0), (pt, pb2), (pl, pr2)), constant_values=fill)
    return windows(xp, xpad, kh, kw, sh, sw, 1, 1, oh, ow), xpad.shape


def _avg_divisor(xp, x, geo, dtype):
    """[oh, ow]: number of elements each window averages over."""
    kh, kw, sh, sw, (pt, pb, pl, pr), oh, ow = geo
    h, w = int(x.shape[2]), int(x.shape[3])

    def count(o, k, s, p, size):
        start = xp.arange(o) * s - p
        return xp.minimum(start + k, size) - xp.maximum(start, 0)

    ch, cw = count(oh, kh, sh, pt, h), count(ow, kw, sw, pl, w)
    return xp.maximum(xp.outer(ch, cw), 1).astype(dtype)


def _geo(ctx, x):
    return _geometry(ctx.attr, int(x.shape[2]), int(x.shape[3]))


@register_kernel("pool2d", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def pool2d_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    geo = _geo(ctx, x)
    if ctx.attr("pooling_type") == "max":
        win, _ = _padded_windows(xp, x, geo, -xp.inf)
        out = xp.max(win, axis=(2, 3))
    else:
        win, _ = _padded_windows(xp, x, geo, 0)
        total = xp.sum(win, axis=(2, 3))
        if ctx.attr("exclusive") or ctx.attr("global_pooling"):
            out = total / _avg_divisor(xp, x, geo, x.dtype)
        else:
            out = total / x.dtype.type(geo[0] * geo[1])
    ctx.set_output("Out", out.astype(x.dtype, copy=False))


@register_kernel("pool2d_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def pool2d_grad_kernel(ctx):
    xp = ctx.xp
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    kh, kw, sh, sw, (pt, pb, pl, pr), oh, ow = geo = _geo(ctx, x)
    n, c, h, w = (int(d) for d in x.shape)
    if ctx.attr("pooling_type") == "max":
        win, padded = _padded_windows(xp, x, geo, -xp.inf)
        flat = xp.reshape(xp.moveaxis(xp.reshape(win, (n, c, kh * kw, oh, ow)), 2, -1),
                          (n, c, oh, ow, kh * kw))
        arg = xp.argmax(flat, axis=-1)           # first maximum, like Paddle
        zero = xp.zeros_like(dout)
        dwin = xp.stack([xp.where(arg == k, dout, zero) for k in range(kh * kw)], axis=2)
        dwin = xp.reshape(dwin, (n, c, kh, kw, oh, ow))
    else:
        _, padded = _padded_windows(xp, x, geo, 0)
        if ctx.attr("exclusive") or ctx.attr("global_pooling"):
            share = dout / _avg_divisor(xp, x, geo, dout.dtype)
        else:
            share = dout / dout.dtype.type(kh * kw)
        dwin = xp.broadcast_to(share[:, :, None, None], (n, c, kh, kw, oh, ow))
    dxpad = scatter_windows(xp, dwin, padded, kh, kw, sh, sw, 1, 1)
    ctx.set_output(grad_var_name("X"), xp.array(dxpad[:, :, pt:pt + h, pl:pl + w], copy=True))
