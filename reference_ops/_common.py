"""Helpers shared by the reference ops.

Not an op module (no ``_op.py`` suffix): nothing here registers anything.

* Paddle's broadcast-with-``axis`` rule for the ``elementwise_*`` ops and the
  reduction of a broadcast gradient back to ``Y``'s shape.
* Small dimension helpers for ``infer_shape`` at compile time, where dims may
  hold ``-1`` (unknown, usually the batch dimension).
"""
from __future__ import annotations

from opkit import GradOpMaker, enforce, errors, grad_var_name

__all__ = [
    "dims_known",
    "numel",
    "normalize_axis",
    "elementwise_y_view_shape",
    "elementwise_broadcast",
    "broadcast_xy",
    "elementwise_infer_shape",
    "reduce_to_shape",
    "reduce_dims",
    "flatten_to_2d_dims",
    "add_elementwise_proto",
    "elementwise_grad_infer_shape",
    "broadcast_y",
    "as_strided",
    "windows",
    "paddings4",
    "check_pair",
    "scatter_windows",
    "UNKNOWN",
    "XYGradMaker",
]

UNKNOWN = -1


def dims_known(dims) -> bool:
    """True when no dimension is unknown (negative)."""
    return all(int(d) >= 0 for d in dims)


def numel(dims) -> int:
    """Product of ``dims``; ``-1`` when any dimension is unknown."""
    n = 1
    for d in dims:
        d = int(d)
        if d < 0:
            return UNKNOWN
        n *= d
    return n


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """Map a negative axis to ``axis + rank`` and validate it lies in [0, rank)."""
    axis = int(axis)
    if not -rank <= axis < rank:       # (the error is built only when it is raised)
        raise errors.InvalidArgument("Attr(%s) = %d is out of range for a tensor of rank %d; "
                                     "it should be in [%d, %d).", what, axis, rank, -rank, rank)
    return axis + rank if axis < 0 else axis


def _trim_trailing_ones(dims):
    dims = list(dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return dims


def elementwise_y_view_shape(x_shape, y_shape, axis: int):
    """Paddle's elementwise broadcast rule (Fluid 1.x).

    ``Y``'s shape must match a contiguous run of ``X``'s dimensions starting at
    ``axis`` (``axis == -1`` means ``rank(X) - rank(Y)``); trailing size-1 dims
    of ``Y`` are trimmed first, and a size-1 dim of ``Y`` broadcasts. Returns the
    shape ``Y`` is reshaped to (rank of ``X``, 1 outside the matched run) so that
    numpy broadcasting does the rest. Unknown (-1) dims are not compared.
    """
    x_shape = [int(d) for d in x_shape]
    y_shape = [int(d) for d in y_shape]
    rx, ry = len(x_shape), len(y_shape)
    if x_shape == y_shape:
        return list(y_shape)
    enforce(rx >= ry,
            errors.InvalidArgument(
                "The rank of Input(Y) (%d, shape %s) should not be greater than the rank "
                "of Input(X) (%d, shape %s) in elementwise ops.", ry, y_shape, rx, x_shape))
    axis = rx - ry if int(axis) == -1 else int(axis)
    enforce(0 <= axis <= rx - ry,
            errors.InvalidArgument(
                "Attr(axis) = %d is invalid for X of shape %s and Y of shape %s: it should "
                "be in [0, %d] (or -1).", axis, x_shape, y_shape, rx - ry))
    y_trim = _trim_trailing_ones(y_shape)
    if y_trim == [1] and ry >= 1 and all(d == 1 for d in y_shape):
        # a Y of all ones broadcasts against anything
        return [1] * rx
    for i, yd in enumerate(y_trim):
        xd = x_shape[axis + i]
        if xd < 0 or yd < 0 or yd == 1:
            continue
        enforce(xd == yd,
                errors.InvalidArgument(
                    "Broadcast dimension mismatch in elementwise op: X of shape %s, Y of "
                    "shape %s, axis %d: Y's dim %d (%d) should equal X's dim %d (%d) or be 1.",
                    x_shape, y_shape, axis, i, yd, axis + i, xd))
    return [1] * axis + y_trim + [1] * (rx - axis - len(y_trim))


def elementwise_broadcast(x_shape, y_shape, axis: int):
    """Paddle's general elementwise broadcast (Fluid 1.8 GetBroadcastDimsArrays): the
    lower-rank input is lined up with the higher-rank one's dims starting at ``axis``
    (``-1``: the rank difference), padded with 1s to the same rank; then, dim by dim, the
    sizes must be equal or one of them 1, and Out takes the larger. Either input may be
    the one that broadcasts, and rank(Y) may exceed rank(X). Trailing 1s of the
    lower-rank input are dropped when it would not fit otherwise.

    Returns ``(x_view, y_view, out_shape)``: the shapes X and Y are reshaped to (same rank)
    and Out's shape. Unknown (-1) dims are not compared."""
    x_shape = [int(d) for d in x_shape]
    y_shape = [int(d) for d in y_shape]
    if x_shape == y_shape:
        return list(x_shape), list(y_shape), list(x_shape)
    rx, ry = len(x_shape), len(y_shape)
    x_big = rx >= ry
    big, small = (x_shape, y_shape) if x_big else (y_shape, x_shape)
    rank = len(big)
    axis = abs(rx - ry) if int(axis) == -1 else int(axis)
    small = list(small)
    while len(small) > 1 and small[-1] == 1 and axis + len(small) > rank:
        small.pop()
    if not 0 <= axis <= rank - len(small):
        raise errors.InvalidArgument(
            "Attr(axis) = %d is invalid for X of shape %s and Y of shape %s: it should "
            "be in [0, %d] (or -1).", axis, x_shape, y_shape, rank - len(small))
    small_view = [1] * axis + small + [1] * (rank - axis - len(small))
    out = []
    for i, (b, s_) in enumerate(zip(big, small_view)):
        if not (b == s_ or b == 1 or s_ == 1 or b < 0 or s_ < 0):
            raise errors.InvalidArgument(
                "Broadcast dimension mismatch in elementwise op: X of shape %s, Y of "
                "shape %s, axis %d: dim %d is %d in one and %d in the other; they "
                "should be equal or one of them 1.", x_shape, y_shape, axis, i,
                b if x_big else s_, s_ if x_big else b)
        if b < 0 or s_ < 0:
            out.append(max(b, s_) if max(b, s_) > 1 else UNKNOWN)
        else:
            out.append(s_ if b == 1 else b)   # numpy's rule: 1 broadcasts, also against 0
    if x_big:
        return list(x_shape), small_view, out
    return small_view, list(y_shape), out


def broadcast_xy(xp, x, y, axis):
    """(X, Y) reshaped so that numpy broadcasting follows Paddle's rule, and their views."""
    shape = x.shape
    if shape == y.shape:  # the common case, kept cheap (the view shapes as tuples)
        return x, y, shape, shape
    xv, yv, _ = elementwise_broadcast(x.shape, y.shape, axis)
    return xp.reshape(x, tuple(xv)), xp.reshape(y, tuple(yv)), xv, yv


def elementwise_infer_shape(ctx):
    """infer_shape shared by the binary elementwise ops: Out has the broadcast dims and X's
    LoD."""
    enforce(ctx.has_input("X"), "Input(X) of elementwise op should not be null.")
    enforce(ctx.has_input("Y"), "Input(Y) of elementwise op should not be null.")
    enforce(ctx.has_output("Out"), "Output(Out) of elementwise op should not be null.")
    x_dims = list(ctx.get_input_dim("X"))
    y_dims = list(ctx.get_input_dim("Y"))
    _, _, out = elementwise_broadcast(x_dims, y_dims, ctx.attr("axis"))
    ctx.set_output_dim("Out", out)
    ctx.share_lod("X", "Out")


def reduce_to_shape(xp, grad, view_shape, target_shape):
    """Sum ``grad`` (of X's shape) over the dims where ``view_shape`` is 1 but the
    gradient is not, then reshape to ``target_shape``. Deterministic (xp.sum)."""
    axes = tuple(i for i, (v, g) in enumerate(zip(view_shape, grad.shape)) if v == 1 and g != 1)
    if axes:
        grad = xp.sum(grad, axis=axes, keepdims=True)
    out = xp.reshape(grad, tuple(int(d) for d in target_shape))
    return out


def flatten_to_2d_dims(dims, num_col_dims: int):
    """[prod(dims[:k]), prod(dims[k:])], -1 where a factor is unknown."""
    return [numel(dims[:num_col_dims]), numel(dims[num_col_dims:])]


# --------------------------------------------------------------------------
# the binary elementwise ops (elementwise_add / _sub / _mul)
# --------------------------------------------------------------------------
def add_elementwise_proto(maker, op_name: str):
    """The slots and attrs shared by the elementwise op makers (comment added by caller)."""
    maker.add_input("X", "(Tensor) The first input tensor of %s op." % op_name)
    maker.add_input("Y", "(Tensor) The second input tensor of %s op; its shape must match a "
                    "contiguous run of X's dims starting at `axis`." % op_name)
    maker.add_output("Out", "(Tensor) The output of %s op, with X's shape and LoD." % op_name)
    maker.add_attr("axis", "int", "(int, default -1) The start dimension index for broadcasting "
                   "Y onto X; -1 means rank(X) - rank(Y).").set_default(-1)
    from reference_ops._extra import add_extra_attrs

    add_extra_attrs(maker, "use_mkldnn", "x_data_format", "y_data_format", "use_quantizer",
                    "mkldnn_data_type", "Scale_x", "Scale_y", "Scale_out")


def elementwise_grad_infer_shape(ctx):
    """infer_shape shared by the elementwise grad ops."""
    from opkit import grad_var_name

    enforce(ctx.has_input(grad_var_name("Out")),
            "Input(Out@GRAD) of elementwise grad op should not be null.")
    x_grad, y_grad = grad_var_name("X"), grad_var_name("Y")
    if ctx.has_output(x_grad):
        ctx.set_output_dim(x_grad, ctx.get_input_dim("X"))
        ctx.share_lod("X", x_grad)
    if ctx.has_output(y_grad):
        ctx.set_output_dim(y_grad, ctx.get_input_dim("Y"))
        ctx.share_lod("Y", y_grad)


def broadcast_y(xp, x, y, axis):
    """Y reshaped so that numpy broadcasting against X follows Paddle's rule, and the view shape."""
    if x.shape == y.shape:  # the common case, kept cheap
        return y, list(y.shape)
    view = elementwise_y_view_shape(x.shape, y.shape, axis)
    return xp.reshape(y, tuple(view)), view


# --------------------------------------------------------------------------
# conv / pool helpers
# --------------------------------------------------------------------------
def as_strided(xp, a, shape, strides):
    """A read-only strided view (numpy) / strided view (cupy) of ``a``."""
    shape, strides = tuple(int(s) for s in shape), tuple(int(s) for s in strides)
    if xp.__name__ == "numpy":
        import numpy as np

        return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)
    return xp.lib.stride_tricks.as_strided(a, shape, strides)


def pad_hw(xp, x, top, bottom, left, right, fill=0):
    """An NCHW array padded along H and W with ``fill`` (a new array, as ``xp.pad`` gives:
    one allocation and one copy, without ``pad``'s generic per-axis machinery, which cost
    more than the convolution itself on small inputs)."""
    n, c, h, w = x.shape
    out = xp.full((n, c, h + top + bottom, w + left + right), fill, dtype=x.dtype)
    out[:, :, top:top + h, left:left + w] = x
    return out


def windows(xp, xpad, kh, kw, sh, sw, dh, dw, oh, ow):
    """View of the sliding windows of a padded NCHW array: shape [N, C, kh, kw, oh, ow],
    window (i, j) at output (y, x) reading xpad[:, :, y*sh + i*dh, x*sw + j*dw]."""
    n, c = xpad.shape[:2]
    s_n, s_c, s_h, s_w = xpad.strides
    return as_strided(xp, xpad, (n, c, kh, kw, oh, ow),
                      (s_n, s_c, s_h * dh, s_w * dw, s_h * sh, s_w * sw))


def paddings4(paddings, what="paddings"):
    """[ph, pw] -> (top, bottom, left, right); [t, b, l, r] as is."""
    p = [int(v) for v in paddings]
    if len(p) not in (2, 4):
        raise errors.InvalidArgument(
            "Attr(%s) should hold 2 ([pad_h, pad_w]) or 4 ([top, bottom, left, right]) values, "
            "but received %s.", what, p)
    if not all(v >= 0 for v in p):
        raise errors.InvalidArgument("Attr(%s) should be non-negative, but received %s.",
                                     what, p)
    return (p[0], p[0], p[1], p[1]) if len(p) == 2 else tuple(p)


def check_pair(values, name, positive=True):
    v = [int(a) for a in values]
    if len(v) != 2:
        raise errors.InvalidArgument("Attr(%s) should hold 2 values ([h, w]), but received %s.",
                                     name, v)
    if positive and not all(a > 0 for a in v):
        raise errors.InvalidArgument("Attr(%s) should be positive, but received %s.", name, v)
    return v


def scatter_windows(xp, dwin, out_shape, kh, kw, sh, sw, dh, dw):
    """col2im: add the window gradients dwin [N, C, kh, kw, oh, ow] back into a zero array
    of ``out_shape`` (the padded input). Loops over kernel positions only; deterministic."""
    oh, ow = dwin.shape[4], dwin.shape[5]
    dx = xp.zeros(out_shape, dtype=dwin.dtype)
    for i in range(kh):
        for j in range(kw):
            hs, ws = i * dh, j * dw
            dx[:, :, hs:hs + sh * (oh - 1) + 1:sh, ws:ws + sw * (ow - 1) + 1:sw] += dwin[:, :, i, j]
    return dx


class XYGradMaker(GradOpMaker):
    """The grad op `<type>_grad` of a binary op X, Y -> Out: it reads X, Y and Out@GRAD and
    writes X@GRAD and Y@GRAD (elementwise_add/_sub/_mul, mul)."""

    def apply(self):
        op = self.new_grad_op(self.fwd_type + "_grad")
        op.set_input("X", self.input("X"))
        op.set_input("Y", self.input("Y"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        op.set_output(grad_var_name("Y"), self.input_grad("Y"))
        return [op]


def reduce_dims(rank: int, dim, reduce_all: bool):
    """The sorted, normalized dims reduced over (every dim when reduce_all)."""
    if reduce_all:
        return list(range(rank))
    if rank == 0:       # Paddle 2.x: a 0-D X reduced over dim 0 / -1 is itself
        enforce(all(int(d) in (0, -1) for d in dim), errors.InvalidArgument(
            "Attr(dim) %s of the reduce op is out of range for X of rank 0: each entry "
            "should be 0 or -1.", list(dim)))
        return []
    dims = []
    for d in dim:
        d = int(d)
        enforce(-rank <= d < rank, errors.InvalidArgument(
            "Attr(dim) %s of the reduce op is out of range for X of rank %d: each entry "
            "should be in [%d, %d).", list(dim), rank, -rank, rank))
        dims.append(d + rank if d < 0 else d)
    return sorted(set(dims))
