"""The parallel signatures (OneFlow's SBP, docs/sbp.md) of the built-in ops: helpers.

Not an op module (no ``_op.py`` suffix). Each op file declares its own signatures in its
"parallel signatures" section, with ``register_sbp`` and the named axis maps below (their
labels are what ``opkit dump`` writes: keep them stable).
"""
from __future__ import annotations

from opkit import grad_var_name, register_sbp
from opkit.sbp import Axis, Signature, Where, broadcast, partial_sum, split

__all__ = ["declare_unary", "declare_elementwise", "elementwise_input_axis",
           "elementwise_grad_axis", "reduced_axis", "is_reduced", "perm_position", "shifted",
           "channel_axis", "attr_is", "reshaped_axis", "G"]

G = grad_var_name   # "X" -> "X@GRAD"


def declare_unary(op_type: str, grad_reads=("X",), extra=(), grad_type: str | None = None,
                  linear: bool = False) -> None:
    """An op that maps X to an Out of the same shape, element by element (the activations,
    clip, ...): split along any axis; the grad op is linear in Out@GRAD (partial sums of the
    cotangent give partial sums of the gradient). `extra`: inputs every device holds whole
    (pow's FactorTensor); `linear`: the forward is linear too (X:P -> Out:P)."""
    b = {slot: broadcast for slot in extra}
    sigs = [Signature({"X": split("i"), "Out": split("i"), **b}, each="X")]
    if linear:
        sigs.append(Signature({"X": partial_sum, "Out": partial_sum, **b}))
    register_sbp(op_type, *sigs)
    reads = {slot: split("i") for slot in grad_reads}
    reads_b = {slot: broadcast for slot in grad_reads}
    register_sbp(grad_type or op_type + "_grad",
                 Signature({**reads, G("Out"): split("i"), G("X"): split("i"), **b},
                           each=G("Out")),
                 Signature({**reads_b, G("Out"): partial_sum, G("X"): partial_sum, **b}))


# -- elementwise broadcasting (Paddle's axis rule, reference_ops._common) --------------------
def _views(ctx, x_slot="X", y_slot="Y"):
    from reference_ops._common import elementwise_broadcast

    x, y = ctx.shape(x_slot), ctx.shape(y_slot)
    xv, yv, out = elementwise_broadcast(x, y, ctx.attr("axis"))
    return x, y, xv, yv, out


def _original_axis(shape, view, out, i):
    """The axis of the input (`shape`, lined up as `view`) that Out's axis i comes from;
    None when the input is broadcast along i (size 1 there)."""
    if view[i] != out[i] or view[i] == 1:
        return None
    if len(shape) == len(view):
        return i
    # the lower-rank input: its dims sit in view at [start, start + len(shape)) (trailing
    # ones may have been dropped); find the start from the matched run
    for start in range(len(view) - len(shape) + 1):
        cand = [1] * start + list(shape) + [1] * (len(view) - start - len(shape))
        if cand == list(view) and start <= i < start + len(shape):
            return i - start
    trimmed = list(shape)
    while len(trimmed) > 1 and trimmed[-1] == 1:
        trimmed.pop()
    for start in range(len(view) - len(trimmed) + 1):
        cand = [1] * start + trimmed + [1] * (len(view) - start - len(trimmed))
        if cand == list(view) and start <= i < start + len(trimmed):
            return i - start
    return None


def elementwise_grad_axis(slot: str) -> Axis:
    """The gradient of X or Y: split along the axis Out's axis i comes from; where the input
    is broadcast along i, each device sums its slice of Out@GRAD: partial_sum."""
    def fn(ctx, i):
        x, y, xv, yv, out = _views(ctx)
        a = _original_axis(x if slot == "X" else y, xv if slot == "X" else yv, out, i)
        return partial_sum if a is None else a
    return Axis(f"{slot.lower()}_axis_of_out(i) or P", fn)


def elementwise_input_axis(slot: str) -> Axis:
    """For the grad op: the axis of X or Y that Out@GRAD's axis i comes from, else B."""
    def fn(ctx, i):
        x, y = ctx.shape("X"), ctx.shape("Y")
        from reference_ops._common import elementwise_broadcast

        xv, yv, out = elementwise_broadcast(x, y, ctx.attr("axis"))
        return _original_axis(x if slot == "X" else y, xv if slot == "X" else yv, out, i)
    return Axis(f"{slot.lower()}_axis_of_out(i) or B", fn)


# -- reductions ------------------------------------------------------------------------------
def _reduced(ctx, x="X"):
    from reference_ops._common import reduce_dims

    return set(reduce_dims(ctx.ndim(x), ctx.attr("dim"), ctx.attr("reduce_all")))


def reduced_axis(x: str = "X") -> Axis:
    """Where X's (kept) axis i lands in Out: i with keep_dim, else i less the reduced axes
    before it."""
    def fn(ctx, i):
        if ctx.attr("keep_dim"):
            return i
        return i - sum(1 for d in _reduced(ctx, x) if d < i)
    return Axis("axis_after_reduce(i)", fn)


def is_reduced(negate: bool = False, x: str = "X") -> Where:
    """i is (not) one of the reduced axes (attrs dim and reduce_all)."""
    if negate:
        return Where("i not reduced", lambda ctx, i: i not in _reduced(ctx, x))
    return Where("i reduced", lambda ctx, i: i in _reduced(ctx, x))


# -- layout changes ------------------------------------------------------------------------
def perm_position(attr: str = "axis") -> Axis:
    """transpose: X's axis i is Out's axis perm.index(i)."""
    def fn(ctx, i):
        perm = [int(a) for a in ctx.attr(attr)]
        perm = [a + len(perm) if a < 0 else a for a in perm]
        return perm.index(i)
    return Axis(f"attr({attr}).index(i)", fn)


def shifted(k: int = 1) -> Axis:
    """i + k (XShape: [0] + shape(X))."""
    return Axis(f"i+{k}", lambda ctx, i: i + k)


def declare_elementwise(op_type: str, linear_in: str) -> None:
    """elementwise_add/_sub/_mul with Paddle's broadcast: split Out along any axis, each
    input along the axis that Out's comes from (broadcast where it has size 1 or lacks the
    axis); gradients of a broadcast input come out as partial sums. `linear_in`: "both"
    (add, sub: X:P Y:P -> Out:P) or "either" (mul: one side partial, the other broadcast)."""
    x, y = elementwise_input_axis("X"), elementwise_input_axis("Y")
    sigs = [Signature({"X": split(x), "Y": split(y), "Out": split("i")}, each="Out")]
    if linear_in == "both":
        sigs.append(Signature({"X": partial_sum, "Y": partial_sum, "Out": partial_sum}))
    else:
        sigs.append(Signature({"X": partial_sum, "Y": broadcast, "Out": partial_sum}))
        sigs.append(Signature({"X": broadcast, "Y": partial_sum, "Out": partial_sum}))
    register_sbp(op_type, *sigs)
    register_sbp(op_type + "_grad",
                 Signature({"X": split(x), "Y": split(y), G("Out"): split("i"),
                            G("X"): split(elementwise_grad_axis("X")),
                            G("Y"): split(elementwise_grad_axis("Y"))}, each=G("Out")),
                 Signature({"X": broadcast, "Y": broadcast, G("Out"): partial_sum,
                            G("X"): partial_sum, G("Y"): partial_sum}))


def channel_axis(attr: str = "data_format") -> Axis:
    """The channel axis of an image tensor: 1 for NCHW-style layouts, the last for NHWC."""
    def fn(ctx, i):
        return -1 if str(ctx.attr(attr)).upper() in ("NHWC", "NDHWC", "NLC") else 1
    return Axis(f"channel_axis(attr({attr}))", fn)


def attr_is(label: str, fn) -> Where:
    return Where(label, lambda ctx, i: bool(fn(ctx)))


def reshaped_axis(x_slot: str, out_slot: str):
    """The axis of Out that X's axis i maps to, or None: the dims before both hold the same
    number of elements, the two dims are equal, and attr shape gives that dim as 0 (copy, at
    the same index) or -1 (inferred), so that each device's own reshape of its slice comes
    out right (an explicit number there, or a Shape/ShapeTensor input, is the logical size)."""
    def fn(ctx, i):
        if ctx.has("Shape") or ctx.has("ShapeTensor"):
            return None
        xs, os_ = ctx.shape(x_slot), ctx.shape(out_slot)
        target = [int(s) for s in ctx.attr("shape")]
        before = 1
        for d in xs[:i]:
            before *= d
        acc = 1
        for j, d in enumerate(os_):
            if acc == before and d == xs[i] and j < len(target) and \
                    (target[j] == -1 or (target[j] == 0 and j == i)):
                return j
            acc *= d
        return None
    return fn
