"""Parallel signatures (OneFlow's SBP): how an op may run on several devices.

An op declares, at registration, the ways its inputs may be distributed over N devices and
how its outputs then come out. Each variable of a signature is one of

* ``split(axis)`` -- every device holds a contiguous slice of the variable along ``axis``
  (OneFlow's balanced split: the first ``dim % N`` devices hold one more);
* ``broadcast`` -- every device holds the whole variable;
* ``partial_sum`` -- every device holds a tensor of the variable's shape, and the variable is
  the sum of them.

A signature is a template: the axis may be an int (negative: relative to the rank of that
variable), the loop variable ``"i"`` of ``each=SLOT`` (one signature per axis of that slot,
optionally filtered by ``where``), or an :class:`Axis` (a named function of the logical
shapes and attrs, ``None`` meaning "broadcast for this i")::

    from opkit import register_sbp
    from opkit.sbp import Signature, split, broadcast, partial_sum

    register_sbp("leaky_relu", Signature({"X": split("i"), "Out": split("i")}, each="X"))
    register_sbp("leaky_relu_grad",
                 Signature({"X": split("i"), "Out@GRAD": split("i"), "X@GRAD": split("i")},
                           each="X"))

The per-device (physical) shapes follow from the logical ones (:func:`physical_shape`): the
op's own ``infer_shape``, run on a device's physical inputs, must give the physical output
shapes that the signature implies. The ``sbp`` check of the harness verifies a declaration
by split-compute-merge; ``opkit dump`` writes the templates (``SbpSignatures``) and ``opkit
compat`` reports a removed one as breaking (``sbp-removed``), an added one as a note
(``sbp-added``). See docs/sbp.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from opkit.framework import errors
from opkit.framework.registry import SBP_DECLARATIONS

__all__ = ["Spec", "split", "broadcast", "partial_sum", "Axis", "Where", "Signature",
           "Instance", "SbpContext", "register_sbp", "sbp_signatures", "has_sbp",
           "physical_shape", "split_bounds", "dump_sbp", "SBP_KEY", "not_attr_axis",
           "attr_axes", "not_attr_axes"]

SBP_KEY = "SbpSignatures"   # the per-op key of `opkit dump`


# -- the three distributions ------------------------------------------------------------------
@dataclass(frozen=True)
class Spec:
    """``kind`` "S" (split), "B" (broadcast) or "P" (partial_sum); ``axis`` for a split."""

    kind: str
    axis: object = None

    def text(self) -> str:
        if self.kind != "S":
            return self.kind
        a = self.axis
        return f"S({a.label if isinstance(a, Axis) else a})"

    def __str__(self) -> str:
        return self.text()


def split(axis) -> Spec:
    """Every device holds a slice along ``axis``: an int (negative: from the end), ``"i"``
    (the signature's loop variable) or an :class:`Axis`."""
    if not isinstance(axis, (int, str, Axis)) or isinstance(axis, bool) or \
            (isinstance(axis, str) and axis != "i"):
        raise errors.InvalidArgument("split(axis): axis must be an int, \"i\" or an "
                                     "opkit.sbp.Axis, got %r", axis)
    return Spec("S", axis)


broadcast = Spec("B")
partial_sum = Spec("P")


@dataclass(frozen=True)
class Axis:
    """A split axis computed from the logical shapes and attrs: ``fn(ctx, i) -> int | None |
    Spec`` (``None``: the variable is broadcast in this instance; a Spec such as
    ``partial_sum``: that distribution). ``label`` is how dumps spell it:
    keep it stable, `opkit compat` compares signatures by their text."""

    label: str
    fn: object = field(compare=False)


@dataclass(frozen=True)
class Where:
    """A condition on a signature: ``fn(ctx, i) -> bool`` (``i`` is None without ``each``).
    ``label`` is how dumps spell it."""

    label: str
    fn: object = field(compare=False)


def _norm(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def not_attr_axis(attr: str = "axis", of: str = "X") -> Where:
    """``i`` is not the axis named by int attr ``attr`` (negative: relative to ``of``'s rank)."""
    return Where(f"i != attr({attr})",
                 lambda ctx, i: i != _norm(int(ctx.attr(attr)), ctx.ndim(of)))


def _attr_axis_set(ctx, attr, of, all_attr):
    rank = ctx.ndim(of)
    if all_attr and ctx.attr(all_attr):
        return set(range(rank))
    value = ctx.attr(attr)
    values = value if isinstance(value, (list, tuple)) else [value]
    return {_norm(int(v), rank) for v in values}


def attr_axes(attr: str, of: str = "X", all_attr: str | None = None) -> Where:
    """``i`` is one of the axes of int/ints attr ``attr`` (every axis when bool attr
    ``all_attr`` is true)."""
    label = f"i in attr({attr})" + (f" or attr({all_attr})" if all_attr else "")
    return Where(label, lambda ctx, i: i in _attr_axis_set(ctx, attr, of, all_attr))


def not_attr_axes(attr: str, of: str = "X", all_attr: str | None = None) -> Where:
    """``i`` is none of the axes of attr ``attr`` (and ``all_attr``, if given, is false)."""
    label = f"i not in attr({attr})" + (f" and not attr({all_attr})" if all_attr else "")
    return Where(label, lambda ctx, i: i not in _attr_axis_set(ctx, attr, of, all_attr))


# -- signatures -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Instance:
    """One concrete signature: ``{slot: Spec}`` with int axes (>= 0)."""

    specs: dict
    template: str

    def text(self) -> str:
        return " ".join(f"{slot}:{spec.text()}" for slot, spec in sorted(self.specs.items()))


class Signature:
    """A signature template (see the module doc)."""

    def __init__(self, specs: dict, each: str | None = None, where: Where | None = None):
        if not isinstance(specs, dict) or not specs:
            raise errors.InvalidArgument("Signature needs a non-empty {slot: spec} dict, got %r",
                                         specs)
        for slot, spec in specs.items():
            if not isinstance(slot, str) or not slot:
                raise errors.InvalidArgument("Signature: slot names are strings, got %r", slot)
            if not isinstance(spec, Spec):
                raise errors.InvalidArgument(
                    "Signature: slot '%s' is %r; use split(axis), broadcast or partial_sum",
                    slot, spec)
            if spec.axis == "i" and each is None:
                raise errors.InvalidArgument(
                    "Signature: slot '%s' is split(\"i\") but the signature has no each=SLOT "
                    "to say which axes i runs over", slot)
        if each is not None and not isinstance(each, str):
            raise errors.InvalidArgument("Signature: each= names a slot, got %r", each)
        if where is not None and not isinstance(where, Where):
            raise errors.InvalidArgument("Signature: where= takes an opkit.sbp.Where, got %r",
                                         where)
        self.specs = dict(specs)
        self.each = each
        self.where = where

    def text(self) -> str:
        """The template as dumps write it, e.g. ``for i in axes(X): Out:S(i) X:S(i)``."""
        head = []
        if self.each is not None:
            head.append(f"for i in axes({self.each})")
        if self.where is not None:
            head.append(f"if {self.where.label}")
        body = " ".join(f"{slot}:{spec.text()}" for slot, spec in sorted(self.specs.items()))
        return (" ".join(head) + ": " + body) if head else body

    __str__ = text

    def __repr__(self) -> str:
        return f"Signature({self.text()!r})"

    def resolve(self, ctx: SbpContext) -> list[Instance]:
        """The concrete instances for these logical shapes and attrs."""
        loop = [None] if self.each is None else list(range(ctx.ndim(self.each)))
        out = []
        for i in loop:
            if self.where is not None and not self.where.fn(ctx, i):
                continue
            specs = {}
            for slot, spec in self.specs.items():
                if not ctx.has(slot):
                    continue       # an absent dispensable slot (or gradient not wanted)
                if spec.kind != "S":
                    specs[slot] = spec
                    continue
                a = spec.axis
                if a == "i":
                    axis = i
                elif isinstance(a, Axis):
                    axis = a.fn(ctx, i)
                else:
                    axis = a
                if axis is None:
                    specs[slot] = broadcast
                    continue
                if isinstance(axis, Spec):      # an Axis may answer broadcast/partial_sum
                    specs[slot] = axis
                    continue
                rank = ctx.ndim(slot)
                axis = _norm(int(axis), rank)
                if not 0 <= axis < rank:
                    raise errors.InvalidArgument(
                        "sbp signature '%s' of op '%s': split axis %d of slot '%s' is out of "
                        "range for rank %d", self.text(), ctx.op_type, axis, slot, rank)
                specs[slot] = Spec("S", axis)
            out.append(Instance(specs, self.text()))
        return out


class SbpContext:
    """The logical facts a signature may use: ``shape(slot, k=0)``, ``ndim(slot)``,
    ``has(slot)``, ``attr(name)`` (defaults filled in), ``op_type``."""

    def __init__(self, op_type: str, shapes: dict, attrs: dict):
        self.op_type = op_type
        self.shapes = {k: [tuple(s) for s in v] for k, v in shapes.items()}
        self.attrs = dict(attrs)

    def has(self, slot: str) -> bool:
        return bool(self.shapes.get(slot))

    def shape(self, slot: str, k: int = 0) -> tuple:
        try:
            return self.shapes[slot][k]
        except (KeyError, IndexError):
            raise errors.NotFound("sbp signature of op '%s': no variable %d in slot '%s'",
                                  self.op_type, k, slot) from None

    def ndim(self, slot: str) -> int:
        return len(self.shape(slot))

    def attr(self, name: str):
        try:
            return self.attrs[name]
        except KeyError:
            raise errors.NotFound("sbp signature of op '%s' reads attr '%s', which the op "
                                  "does not have", self.op_type, name) from None


# -- the registry ---------------------------------------------------------------------------
_SBP: dict[str, list[Signature]] = SBP_DECLARATIONS   # lives in the registry (scratch())


def register_sbp(op_type: str, *signatures: Signature) -> list[Signature]:
    """Declare the parallel signatures of ``op_type`` (replaces an earlier declaration).
    Slot names are checked against the op's proto when it has one."""
    if not isinstance(op_type, str) or not op_type:
        raise errors.InvalidArgument("register_sbp needs a non-empty op type, got %r", op_type)
    if len(signatures) == 1 and isinstance(signatures[0], (list, tuple)):
        signatures = tuple(signatures[0])
    for sig in signatures:
        if not isinstance(sig, Signature):
            raise errors.InvalidArgument("register_sbp('%s', ...): expected opkit.sbp."
                                         "Signature objects, got %r", op_type, sig)
    from opkit.framework.registry import _OPS

    info = _OPS.get(op_type)
    proto = getattr(info, "proto", None)
    if proto is not None:
        known = {v.name for v in proto.inputs} | {v.name for v in proto.outputs}
        for sig in signatures:
            for slot in list(sig.specs) + ([sig.each] if sig.each else []):
                if slot not in known:
                    raise errors.InvalidArgument(
                        "register_sbp('%s'): signature '%s' names slot '%s', which the op "
                        "does not have (its slots: %s)", op_type, sig.text(), slot,
                        ", ".join(sorted(known)))
    _SBP[op_type] = list(signatures)
    return _SBP[op_type]


def sbp_signatures(op_type: str) -> list[Signature] | None:
    """The declared signature templates of ``op_type``, or None when it declares none."""
    from opkit.framework.registry import has_op

    if op_type not in _SBP:
        has_op(op_type)        # loads the op's module (which declares them)
    got = _SBP.get(op_type)
    return None if got is None else list(got)


def has_sbp(op_type: str) -> bool:
    return sbp_signatures(op_type) is not None


def dump_sbp(op_type: str) -> dict | None:
    """``{op_type: [text, ...], "<op_type>_grad": [...]}`` for the dump (None: none)."""
    out = {}
    for t in (op_type, op_type + "_grad"):
        sigs = _SBP.get(t)
        if sigs is not None:
            out[t] = sorted({s.text() for s in sigs})
    return out or None


# -- physical shapes --------------------------------------------------------------------------
def split_bounds(dim: int, n: int) -> list[tuple[int, int]]:
    """OneFlow's balanced split of ``dim`` over ``n`` devices: [(start, stop), ...]; the
    first ``dim % n`` devices hold one more."""
    base, rem = divmod(int(dim), int(n))
    out, start = [], 0
    for k in range(n):
        size = base + (1 if k < rem else 0)
        out.append((start, start + size))
        start += size
    return out


def physical_shape(logical_shape, spec: Spec, n: int, rank: int) -> tuple:
    """The shape device ``rank`` of ``n`` holds of a variable with ``logical_shape``."""
    shape = list(logical_shape)
    if spec.kind == "S":
        start, stop = split_bounds(shape[spec.axis], n)[rank]
        shape[spec.axis] = stop - start
    return tuple(shape)
