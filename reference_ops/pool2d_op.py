"""pool2d: 2-D max or average pooling (NCHW or NHWC; explicit, SAME, VALID or adaptive)."""
from opkit import (OpMaker, OperatorWithKernel, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from reference_ops._extra import add_extra_attrs
from reference_ops._common import check_pair, pad_hw, paddings4, scatter_windows, windows


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
        self.add_attr("adaptive", "bool", "(bool, default false) Adaptive pooling: ksize is "
                      "the output size, and output (i, j) pools rows [floor(i H / oh), "
                      "ceil((i + 1) H / oh)) and the columns likewise.").set_default(False)
        self.add_attr("padding_algorithm", "string", "(string, default EXPLICIT) EXPLICIT uses "
                      "`paddings`; SAME pads so that the output size is ceil(input / stride); "
                      "VALID uses no padding.").set_default("EXPLICIT").in_set(
                          ["EXPLICIT", "SAME", "VALID"])
        self.add_attr("data_format", "string", "(string, default NCHW) The layout of X and "
                      "Out: NCHW, or NHWC (channel last); AnyLayout means NCHW."
                      ).set_default("NCHW").in_set(["NCHW", "NHWC", "AnyLayout"])
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
    """(kh, kw, sh, sw, (pt, pb, pl, pr), oh, ow); -1 sizes where h or w is unknown.

    As Paddle's pool_op: SAME/VALID set the paddings, global pooling and adaptive pooling
    zero them, global pooling makes the window the whole input, and adaptive pooling makes
    ksize the output size (its windows are computed by ``_adaptive_bounds``)."""
    sh, sw = check_pair(attrs_get("strides"), "strides")
    kh, kw = check_pair(attrs_get("ksize"), "ksize")
    pads = paddings4(attrs_get("paddings"))
    algorithm = attrs_get("padding_algorithm")
    if algorithm == "VALID":
        pads = (0, 0, 0, 0)
    elif algorithm == "SAME":
        p = list(pads)
        for i, (size, k, s) in enumerate(((h, kh, sh), (w, kw, sw))):
            if size >= 0:
                out = (size + s - 1) // s
                total = max((out - 1) * s + k - size, 0)
                p[2 * i], p[2 * i + 1] = total // 2, total - total // 2
        pads = tuple(p)
    if attrs_get("global_pooling"):
        kh, kw, pads = h, w, (0, 0, 0, 0)
    if attrs_get("adaptive"):
        return kh, kw, sh, sw, (0, 0, 0, 0), kh, kw
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
            "Input(X) of Pool2dOp should be 4-D (%s), but its shape is %s.",
            ctx.attr("data_format"), dims))
        last = ctx.attr("data_format") == "NHWC"
        given = dims
        if last:
            dims = [dims[0], dims[3], dims[1], dims[2]]
        kh, kw, sh, sw, pads, oh, ow = _geometry(ctx.attr, dims[2], dims[3])
        for name, v, size in (("height", oh, dims[2]), ("width", ow, dims[3])):
            enforce(size < 0 or v > 0, errors.InvalidArgument(
                "Pool2dOp's output %s would be %d for Input(X) of shape %s with ksize %s, "
                "strides %s and paddings %s.", name, v, given, [kh, kw], [sh, sw], list(pads)))
        ctx.set_output_dim("Out", [dims[0], oh, ow, dims[1]] if last
                           else [dims[0], dims[1], oh, ow])


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
    xpad = pad_hw(xp, x, pt, pb2, pl, pr2, fill)
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


def _adaptive_bounds(size, out):
    """[(start, end)] of each adaptive window along one axis."""
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def _adaptive_windows(x, oh, ow):
    h, w = int(x.shape[2]), int(x.shape[3])
    for i, (hs, he) in enumerate(_adaptive_bounds(h, oh)):
        for j, (ws, we) in enumerate(_adaptive_bounds(w, ow)):
            yield i, j, (slice(None), slice(None), slice(hs, he), slice(ws, we))


def _adaptive_pool(xp, x, oh, ow, is_max):
    out = xp.empty(x.shape[:2] + (oh, ow), dtype=x.dtype)
    for i, j, win in _adaptive_windows(x, oh, ow):
        out[:, :, i, j] = xp.max(x[win], axis=(2, 3)) if is_max else xp.mean(x[win], axis=(2, 3))
    return out


def _adaptive_pool_grad(xp, x, dout, oh, ow, is_max):
    n, c = x.shape[:2]
    dx = xp.zeros_like(x)
    for i, j, win in _adaptive_windows(x, oh, ow):
        part = x[win]
        g = dout[:, :, i, j]
        if is_max:      # the first maximum of the window gets the gradient (as in Paddle)
            flat = xp.reshape(part, (n, c, part.shape[2] * part.shape[3]))  # no -1: n may be 0
            arg = xp.argmax(flat, axis=-1)
            onehot = (xp.arange(flat.shape[-1])[None, None, :] == arg[:, :, None])
            dx[win] += xp.reshape(onehot * g[:, :, None], part.shape)
        else:
            dx[win] += (g / g.dtype.type(part.shape[2] * part.shape[3]))[:, :, None, None]
    return dx


def _nchw(ctx, xp, a):
    return xp.transpose(a, (0, 3, 1, 2)) if ctx.attr("data_format") == "NHWC" else a


def _back(ctx, xp, a):
    if ctx.attr("data_format") == "NHWC":
        return xp.ascontiguousarray(xp.transpose(a, (0, 2, 3, 1)))
    return a


@register_kernel("pool2d", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def pool2d_kernel(ctx):
    xp = ctx.xp
    x = _nchw(ctx, xp, ctx.input("X"))
    geo = _geo(ctx, x)
    if ctx.attr("adaptive"):
        out = _adaptive_pool(xp, x, geo[5], geo[6], ctx.attr("pooling_type") == "max")
    elif ctx.attr("pooling_type") == "max":
        win, _ = _padded_windows(xp, x, geo, -xp.inf)
        out = xp.max(win, axis=(2, 3))
    else:
        win, _ = _padded_windows(xp, x, geo, 0)
        total = xp.sum(win, axis=(2, 3))
        if ctx.attr("exclusive") or ctx.attr("global_pooling"):
            out = total / _avg_divisor(xp, x, geo, x.dtype)
        else:
            out = total / x.dtype.type(geo[0] * geo[1])
    ctx.set_output("Out", _back(ctx, xp, out.astype(x.dtype, copy=False)))


@register_kernel("pool2d_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def pool2d_grad_kernel(ctx):
    xp = ctx.xp
    x = _nchw(ctx, xp, ctx.input("X"))
    dout = _nchw(ctx, xp, ctx.input(grad_var_name("Out")))
    kh, kw, sh, sw, (pt, pb, pl, pr), oh, ow = geo = _geo(ctx, x)
    n, c, h, w = (int(d) for d in x.shape)
    if ctx.attr("adaptive"):
        dx = _adaptive_pool_grad(xp, x, dout, oh, ow, ctx.attr("pooling_type") == "max")
        ctx.set_output(grad_var_name("X"), _back(ctx, xp, dx))
        return
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
    dx = dxpad[:, :, pt:pt + h, pl:pl + w]
    ctx.set_output(grad_var_name("X"), _back(ctx, xp, xp.array(dx, copy=True)))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, split  # noqa: E402
from reference_ops._sbp import G, channel_axis  # noqa: E402

_C = channel_axis("data_format")
# every image and every channel is pooled on its own: batch or channel split
register_sbp("pool2d",
             Signature({"X": split(0), "Out": split(0)}),
             Signature({"X": split(_C), "Out": split(_C)}))
register_sbp("pool2d_grad",
             Signature({"X": split(0), G("Out"): split(0), G("X"): split(0)}),
             Signature({"X": split(_C), G("Out"): split(_C), G("X"): split(_C)}))
