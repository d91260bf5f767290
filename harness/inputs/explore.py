"""The cases `explore` derives from an OpTest's case over the op's declared contract:
`derive_cases` (attrs, values, shapes and their combinations; `against` runs them too) and
`value_strategy` (drawn values, shrinkable). What each is: docs/harness.md, "Exploring the
declared contract"; the `explore` check (harness.checks.declarations.explore) judges both."""
from __future__ import annotations

import functools
import itertools
import operator
import zlib
from dataclasses import dataclass, field

import numpy as np

from harness import options
from harness.backend.case import as_value, map_inputs, normalize_slots
from harness.inputs.variants.shapes import cut
from harness.backend.seam import proto_of
from harness.options import DEFAULT_SEED
from harness.reporting.values import fmt_value
from opkit.framework.domains import Ref
from opkit.framework.dtypes import finfo, is_float, is_low_precision

__all__ = ["Explored", "derive_cases", "value_strategy"]

SPIKES = 3          # drawn elements per input of a generated case (value_strategy)

_SKIP_ATTR_WORDS = ("seed", "use_", "is_test", "fix_seed", "mkldnn", "cudnn", "op_role",
                    "op_namescope", "op_callstack", "op_device", "with_quant_attr")


@dataclass
class Explored:
    """One derived case: what changed, the new inputs and attrs, how it is judged."""

    kind: str                       # "attr", "pair", "value", "shape", "attr+value", "reseed"
    note: str
    inputs: dict
    attrs: dict
    in_domain: bool = True          # inside every declared domain
    strict: bool = False            # a refusal of it is a failure (declared discrete values,
                                    # input values)
    grads: bool = False             # judge gradients too (finite values)
    info: dict = field(default_factory=dict)


def _rng(case, seed) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{case.op_type}:{case.name}".encode()) + seed)


def _map_spec(inputs, name, new):
    """`inputs` with the variable `name`'s array replaced by `new` (LoD kept)."""
    return map_inputs(inputs, lambda s: as_value(s, new) if s.name == name else as_value(s))


def _value_case(case, s, note, new, **judged) -> Explored:
    """The case with input variable `s`'s values replaced by `new`."""
    return Explored("value", f"{s.name}: {note}", _map_spec(case.inputs, s.name, new),
                    dict(case.attrs or {}), info={"var": s.name}, **judged)


def _domain(proto, slot):
    """The declared domain of input `slot`, or None."""
    return getattr(proto.input(slot) if proto is not None else None, "domain", None)


def _bound(b, attrs, shapes):
    return b.resolve(attrs, shapes) if isinstance(b, Ref) else b


def _at(a, k, value):
    """A copy of `a` with flat element `k` set to `value`."""
    b = a.copy()
    b.reshape(-1)[k] = value
    return b


def _shapes(specs) -> dict:
    out = {}
    for slot, items in specs.items():
        for s in items:
            if isinstance(s.data, np.ndarray):
                out.setdefault(slot, s.data.shape)
                out[s.name] = s.data.shape
    return out


def _value_cases(case, specs, proto, rng) -> list[Explored]:
    per_input = []
    attrs = dict(case.attrs or {})
    shapes = _shapes(specs)
    for slot, items in specs.items():
        dom = _domain(proto, slot)
        for s in items[:1]:
            a = s.data
            if not isinstance(a, np.ndarray) or a.size == 0:
                continue
            k = int(rng.integers(a.size))
            if is_float(a.dtype):
                per_input.append(_float_values(case, s, a, k, dom, rng, attrs, shapes))
            elif a.dtype.kind in "iu":
                per_input.append(_int_values(case, s, a, k, dom, attrs, shapes, rng))
            elif a.dtype.kind == "b":
                per_input.append([_value_case(case, s, f"all {v}", np.full_like(a, v))
                                  for v in (True, False) if not (a == v).all()])
    per_input.insert(1, _shared_nan(case, specs, proto, rng))
    # one of each input's values in turn: a budget that ends early still covers every input
    return _round_robin(per_input)


def _round_robin(groups) -> list:
    return [x for group in itertools.zip_longest(*groups) for x in group if x is not None]


def _shared_nan(case, specs, proto, rng) -> list[Explored]:
    """NaN at the same element of every float input of the first float input's shape
    (NaN against NaN: equality, max/min of two NaNs, equal_nan flags)."""
    floats = [(slot, s) for slot, items in specs.items() for s in items[:1]
              if isinstance(s.data, np.ndarray) and is_float(s.data.dtype) and s.data.size
              and not s.lengths]
    same = [(slot, s) for slot, s in floats if s.data.shape == floats[0][1].data.shape]
    doms = [_domain(proto, slot) for slot, _ in same]
    if len(same) < 2 or any(d is not None and not d.allows_nan() for d in doms):
        return []
    k = int(rng.integers(same[0][1].data.size))
    names = {s.name for _, s in same}

    def nan_at(s):
        return as_value(s, _at(s.data, k, np.nan)) if s.name in names else as_value(s)

    return [Explored("value", f"NaN at the same element of {', '.join(sorted(names))}",
                     map_inputs(case.inputs, nan_at), dict(case.attrs or {}),
                     info={"var": sorted(names)[0]})]


def _float_values(case, s, a, k, dom, rng, attrs, shapes) -> list[Explored]:
    out = []
    at = functools.partial(_at, a, k)

    def add(note, b, grads=False):
        if dom is None or dom.contains(b, attrs=attrs, shapes=shapes):
            out.append(_value_case(case, s, note, b, strict=dom is not None, grads=grads))

    where = f"[{', '.join(str(int(i)) for i in np.unravel_index(k, a.shape))}]" if a.ndim else ""
    if a.size > 1:
        signs = np.where(rng.random(a.shape) < 0.5, -1.0, 1.0)
        if (signs > 0).all() or (signs < 0).all():
            signs.reshape(-1)[0] *= -1
        add("mixed signs (x with random signs)", (np.abs(a) * signs + 0.0).astype(a.dtype),
            grads=True)
    add(f"NaN at {s.name}{where}", at(np.nan))
    # float16 / bfloat16: the dtype's own range, not float64's -- its largest finite value
    # (float16's 65504) of both signs, its smallest normal and smallest subnormal
    low = is_low_precision(a.dtype)
    if low:
        fi, name = finfo(a.dtype), a.dtype.name
        top, normal, sub = float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal)
        add(f"{top:g} ({name}'s largest finite) at {s.name}{where}", at(top))
        add(f"{-top:g} ({name}'s lowest finite) at {s.name}{where}", at(-top))
    add("every value negative (-|x| - 0.25)", (-(np.abs(a) + 0.25)).astype(a.dtype), grads=True)
    add(f"+inf at {s.name}{where}", at(np.inf))
    halves = (rng.permutation(a.size) % 7 - 3 + 0.5).reshape(a.shape).astype(a.dtype)
    add("exact halves (-2.5 .. 3.5)", halves)
    add(f"-inf at {s.name}{where}", at(-np.inf))
    if a.size > 1:
        add("ties (values rounded to multiples of 0.5)",
            (np.round(a * 2) / 2).astype(a.dtype))
    add(f"-0.0 at {s.name}{where}", at(-0.0))
    if low:
        add(f"{normal:g} ({name}'s smallest normal) at {s.name}{where}", at(normal))
        add(f"{sub:g} ({name}'s smallest subnormal) at {s.name}{where}", at(sub))
    return out


def _int_values(case, s, a, k, dom, attrs, shapes, rng) -> list[Explored]:
    out = []
    info = np.iinfo(a.dtype)

    def add(note, value, in_domain):
        if info.min <= value <= info.max:
            out.append(_value_case(case, s, note, _at(a, k, value), in_domain=in_domain,
                                   strict=in_domain and dom is not None))

    if dom is not None and dom.kind == "integers":
        lo, hi = _bound(dom.lo, attrs, shapes), _bound(dom.hi, attrs, shapes)
        if lo is not None:
            add(f"{int(lo)} (the lowest value of {dom})", int(lo), True)
            add(f"{int(lo) - 1} (just below {dom})", int(lo) - 1, False)
        if hi is not None:
            add(f"{int(hi) - 1} (the highest value of {dom})", int(hi) - 1, True)
            add(f"{int(hi)} (just above {dom})", int(hi), False)
        return out
    if dom is not None:
        return out
    if info.min < 0 and a.size > 1 and a.min() >= 0 and a.max() > 0:
        signs = np.where(rng.random(a.shape) < 0.5, -1, 1)
        b = (a * signs).astype(a.dtype)
        if (b < 0).any():
            out.append(_value_case(case, s, "mixed signs (x with random signs)", b))
    if info.min < 0:
        add("-1 (a negative integer)", -1, True)
    add(f"{int(a.max()) + 1} (one above the case's largest)", int(a.max()) + 1, True)
    if info.min < 0:
        add(f"{int(info.min)} (the dtype's minimum)", int(info.min), True)
    return out


def _rank_of(specs, name=None) -> int | None:
    """The rank of input `name` (a slot or a variable), or of the first float input."""
    return next((s.data.ndim for slot, items in specs.items() for s in items
                 if isinstance(s.data, np.ndarray) and (name in (slot, s.name) if name
                                                        else is_float(s.data.dtype))), None)


def _attr_values(a, value, specs) -> tuple[list, bool]:
    """(other values of attr `a` to try, whether they are declared discrete values)."""
    dom = a.domain
    kind = dom.kind if dom is not None else None
    if kind == "set":
        return [v for v in dom.values if v != value], True
    if kind == "dtype":
        vals = list(dom.values) or ["float32", "float64", "int32", "int64"]
        return [v for v in vals if v != value and _dtype_eq(v, value) is False], True
    if a.type == "bool":
        return [not bool(value)], False
    if kind in ("axis", "axes", "perm"):
        rank = _rank_of(specs, dom.of)
        if not rank:
            return [], True
        if kind == "axis":
            return [v for v in range(-rank, rank) if v != value], True
        vals = [int(v) for v in (value or [])]
        if kind == "perm":
            perms = [list(reversed(range(rank))), list(range(1, rank)) + [0]]
            if rank >= 2:
                perms.append([1, 0] + list(range(2, rank)))
            return _unique([p for p in perms if p != vals]), True
        # the same axes reversed and spelled the other way, each single axis, all of them
        cands = [vals[::-1], [v - rank if v >= 0 else v + rank for v in vals]]
        cands += [[i] for i in range(rank)] + [list(range(rank))]
        if rank >= 2:
            cands.append([rank - 1, 0])
        return _unique([c for c in cands if c != vals and c]), True
    if a.type in ("float", "float64"):
        v = float(value) if isinstance(value, (int, float)) else 0.0
        cands = [0.0, -1.0, 0.5, 2.0, 2 * v + 1.0, -v, 10.0] + _range_ends(dom, kind, float, 1e-3)
    elif a.type in ("int", "long"):
        v = int(value) if isinstance(value, (int, np.integer)) else 0
        cands = [v + 1, v - 1, 0, -1, v + 5, 2 * v + 3] + _range_ends(dom, kind, int, 1)
    elif a.type in ("ints", "longs") and isinstance(value, (list, tuple)) and value:
        v = [int(x) for x in value]
        cands = [v[::-1], [v[0] + 1] + v[1:], v[:-1] + [v[-1] + 1]]   # == v or twice: dropped
    else:
        return [], False
    return _unique([c for c in cands if c != v and (kind != "range" or dom.contains(c))
                    and _passes(a, c)]), False


def _range_ends(dom, kind, conv, step) -> list:
    """A declared range's bounds as `conv` values (`step` inside an open one)."""
    if kind != "range":
        return []
    return [conv(b) + (step if b == dom.lo else -step) if open_ else conv(b)
            for b, open_ in ((dom.lo, dom.lo_open), (dom.hi, dom.hi_open))
            if isinstance(b, (int, float))]


def _dtype_eq(a, b):
    try:
        return np.dtype(a) == np.dtype(b)
    except TypeError:
        return a == b


def _unique(items: list) -> list:
    return [x for i, x in enumerate(items) if x not in items[:i]]


def _passes(a, v) -> bool:
    try:
        return all(bool(pred(v)) for _, pred in a.checks)
    except Exception:  # noqa: BLE001
        return False


def explorable_attrs(proto, attrs, skip=_SKIP_ATTR_WORDS):
    """(AttrProto, the case's value or the default) of each attr to vary: not extra, not
    generated, with a value, and no word of `skip` in its name."""
    for a in getattr(proto, "attrs", []) or []:
        if not (a.extra or a.generated or (a.name not in attrs and not a.has_default)
                or any(w in a.name.lower() for w in skip)):
            yield a, (attrs[a.name] if a.name in attrs else a.default)


def _attr_cases(case, specs, proto) -> tuple[list, list]:
    attrs = dict(case.attrs or {})
    singles, discrete = [], []
    for a, value in explorable_attrs(proto, attrs):
        values, strict = _attr_values(a, value, specs)
        is_discrete = a.type == "bool" or (a.domain is not None and
                                           a.domain.kind in ("set", "dtype"))
        # a raw error of the kernel is judged for bools and declared domains; an
        # undeclared int or float value may just be one infer_shape does not check
        lax = a.type != "bool" and a.domain is None
        info = {"attr": a.name, "alts": {a.name: values}, "discrete": is_discrete, "lax": lax}
        singles += [Explored("attr", f"attr {a.name} = {v!r} (the case: {value!r})", case.inputs,
                             {**attrs, a.name: v}, strict=strict, grads=True, info=dict(info))
                    for v in values]
        if values and is_discrete:
            discrete.append((a, value, values))
    pairs = [Explored("pair", f"attrs {a1.name} = {x!r} and {a2.name} = {y!r} together (the "
                              f"case: {v1!r}, {v2!r})", case.inputs,
                      {**attrs, a1.name: x, a2.name: y}, grads=True)
             for (a1, v1, o1), (a2, v2, o2) in itertools.combinations(discrete, 2)
             for x, y in itertools.product(o1[:3], o2[:3])]
    return singles, pairs


_AXIS_NAMES = ("axis", "axes", "dim", "dims")


def _rank_attrs(case, proto) -> dict:
    """{attr: its value for a 0-D input} of the case's rank-dependent attrs (an axis-domain
    attr or one named axis/dim: 0; an axes list or int list named so: [0]); {} when none."""
    out = {}
    for a, value in explorable_attrs(proto, dict(case.attrs or {})):
        kind = a.domain.kind if a.domain is not None else None
        if kind == "axis" or (a.type in ("int", "long") and a.name in _AXIS_NAMES):
            out[a.name] = 0
        elif kind == "axes" or (a.type in ("ints", "longs") and a.name in _AXIS_NAMES):
            out[a.name] = [0] if value else value
    return {k: v for k, v in out.items() if (case.attrs or {}).get(k) != v}


def _shape_cases(case, specs, proto=None) -> list[Explored]:
    if any(s.lengths or not isinstance(s.data, np.ndarray)
           for items in specs.values() for s in items):
        return []
    main = next((s for items in specs.values() for s in items
                 if is_float(s.data.dtype) and s.data.ndim >= 1), None)
    if main is None:
        return []
    shape = main.data.shape
    out = []

    def add(note, inputs, **info):
        out.append(Explored("shape", note, inputs, dict(case.attrs or {}), grads=True,
                            info=info))

    def same(fn):
        return map_inputs(case.inputs, lambda s: as_value(s, fn(s.data))
                          if s.data.shape == shape else as_value(s))

    def stacked(a):
        # new values; a non-negative input stays non-negative (a declared one-sided domain)
        flip = -0.75 if is_float(a.dtype) and not (a >= 0).all() else 0.75
        other = (a * flip + 0.125) if is_float(a.dtype) else a
        return np.stack([a, other.astype(a.dtype)])

    if all(s.data.shape == shape for items in specs.values() for s in items if s.data.ndim):
        # 0-D only where every input is of the one shape (no broadcast operand)
        zero_d = same(lambda a: a.reshape(-1)[:1].reshape(()).copy())
        add(f"0-D inputs (every input of shape {list(shape)} cut to its first element)", zero_d)
        axes = _rank_attrs(case, proto)
        if axes:       # the rank-dependent attrs adapted: axis 0, an axis list [0]
            said = ", ".join(f"{k} = {v!r} (the case: {(case.attrs or {}).get(k)!r})"
                             for k, v in axes.items())
            out.append(Explored("shape", f"0-D inputs with {said}", zero_d,
                                {**dict(case.attrs or {}), **axes}, grads=True))
    for d in [d for d in dict.fromkeys(reversed(shape)) if d > 1][:2]:
        add(f"dims of size {d} cut to 1", cut(case.inputs, {d: 1}))
    add(f"rank {len(shape) + 1} (inputs of shape {list(shape)} stacked with new values along "
        "a new leading dim)", same(stacked), other_rank=True)
    if len(shape) >= 2:
        add(f"rank {len(shape) - 1} (inputs of shape {list(shape)} cut to their first row)",
            same(lambda a: a[0].copy()), other_rank=True)
    return out


def _combined_cases(case, singles, values) -> list[Explored]:
    """Each attr's first two other values together with NaN (in one input, and at one
    element of every input of a shape) and with all-negative inputs: a flag that matters
    only on NaN (equal_nan), a padding that shows only under negative values."""
    picks = []
    for key in ("NaN at the same", "NaN at", "every value negative"):
        hit = next((v for v in values if key in v.note and v not in picks), None)
        if hit is not None:
            picks.append(hit)
    out, per_attr = [], {}
    # declared discrete values (bools, value sets) first: a flag that matters only on NaN
    for single in sorted(singles, key=lambda x: not x.info.get("discrete")):
        name = single.info.get("attr")
        if per_attr.get(name, 0) >= 2:
            continue
        per_attr[name] = per_attr.get(name, 0) + 1
        for val in picks:
            out.append(Explored("attr+value", f"{single.note} with {val.note}", val.inputs,
                                dict(single.attrs), strict=False,
                                info=dict(val.info, lax=single.info.get("lax", False))))
    return out


def derive_cases(case, seed: int = DEFAULT_SEED, limit: int | None = None) -> list[Explored]:
    """The derived cases of `case` judged by `explore` (at most `limit`, default budget())."""
    limit = options.current().explore if limit is None else limit
    proto = proto_of(case.op_type)
    specs = normalize_slots(case.inputs)
    rng = _rng(case, seed)
    singles, pairs = _attr_cases(case, specs, proto) if proto is not None else ([], [])
    values = _value_cases(case, specs, proto, rng)
    shapes = _shape_cases(case, specs, proto)
    combined = _combined_cases(case, singles, values)
    rng.shuffle(pairs)
    # every value of every bool / value-set attr is judged whatever the budget (a flag's
    # other value is the contract's own case); the rest round-robin up to the budget
    discrete = [x for x in singles if x.info.get("discrete")] if limit else []
    rest = [x for x in singles if not any(x is d for d in discrete)]
    return discrete + _round_robin([rest, values, shapes, pairs, combined])[:limit]


# -- drawing (hypothesis): values over the declared domains, shrinkable ---------------------
def _elements(dom, span: float, attrs, shapes):
    """The hypothesis strategy of one finite float inside `dom` (None: undeclared, drawn in
    [-span, span]), or None for a domain drawn values cannot follow (integers)."""
    from hypothesis import strategies as st

    kind = dom.kind if dom is not None else None
    lo, hi, lo_open, hi_open = -span, span, False, False
    if kind in ("positive", "nonnegative", "probabilities"):
        lo, lo_open, hi = 0.0, kind == "positive", 1.0 if kind == "probabilities" else span
    elif kind == "range":
        rlo, rhi = _bound(dom.lo, attrs, shapes), _bound(dom.hi, attrs, shapes)
        if rlo is not None:
            lo, lo_open, hi = float(rlo), dom.lo_open, float(rlo) + 2 * span
        if rhi is not None:
            hi, hi_open = float(rhi), dom.hi_open
            lo = lo if rlo is not None else hi - 2 * span
        if not lo < hi:
            return None
    elif kind not in (None, "finite"):
        return None
    return st.floats(lo, hi, exclude_min=lo_open, exclude_max=hi_open, allow_nan=False,
                     allow_infinity=False)


def _spikes(targets, first: int):
    """(first, per target input a list of (flat index, value)): at least one in `first`."""
    from hypothesis import strategies as st

    return st.tuples(st.just(first), st.tuples(*[
        st.lists(st.tuples(st.integers(0, s.data.size - 1), elements), min_size=int(i == first),
                 max_size=SPIKES, unique_by=operator.itemgetter(0))
        for i, (s, _, elements) in enumerate(targets)]))


def _spiked(case, targets, attrs, shapes, drawn):
    """The Explored case of drawn spikes, or None when one leaves the declared domain."""
    first, per_input = drawn
    inputs, notes = case.inputs, []
    for (s, dom, _), spikes in zip(targets, per_input):
        if not spikes:
            continue
        b = s.data.copy()
        b.reshape(-1)[[k for k, _ in spikes]] = [v for _, v in spikes]
        if dom is not None and not dom.contains(b, attrs=attrs, shapes=shapes):
            return None
        inputs = _map_spec(inputs, s.name, b)
        notes += [f"{s.name}[{', '.join(str(int(j)) for j in np.unravel_index(k, b.shape))}]"
                  f" = {fmt_value(b.reshape(-1)[k])}" for k, _ in sorted(spikes)]
    return Explored("value", f"drawn values (hypothesis, shrunk): {', '.join(notes)} (the "
                             "case's other values)", inputs, dict(attrs),
                    info={"var": targets[first][0].name, "generated": True})


def value_strategy(case):
    """A hypothesis strategy of `Explored` value cases: the case with up to SPIKES elements
    of each float input set to finite values drawn inside the input's declared domain (an
    undeclared one: within 8x the case's largest magnitude, at least [-8, 8]). It shrinks
    toward one element of the first input at the simplest value. None: no float input."""
    proto = proto_of(case.op_type)
    specs = normalize_slots(case.inputs)
    attrs, shapes, targets = dict(case.attrs or {}), _shapes(specs), []
    for slot, items in specs.items():
        dom = _domain(proto, slot)
        for s in items[:1]:
            a = s.data
            if not isinstance(a, np.ndarray) or not a.size or not is_float(a.dtype):
                continue
            finite = np.abs(a[np.isfinite(a)].astype(np.float64))
            span = max(8.0, 8 * float(finite.max())) if finite.size else 8.0
            span = min(span, float(finfo(a.dtype).max) / 4)   # float16: its own range
            elements = _elements(dom, span, attrs, shapes)
            if elements is not None:
                targets.append((s, dom, elements))
    if not targets:
        return None
    from hypothesis import strategies as st

    # map/flatmap of named functions (no @composite: hypothesis reads a composite's and a
    # lambda's source, ~15-60 ms in every forked worker)
    return st.integers(0, len(targets) - 1).flatmap(functools.partial(_spikes, targets)).map(
        functools.partial(_spiked, case, targets, attrs, shapes)).filter(
        functools.partial(operator.is_not, None))
