"""`explore`: the op's declared contract, explored from each OpTest case.

An author's case goes where the author thought of going. From every case this check derives
other cases inside the op's declared domains (opkit.framework.domains; docs/domains.md) and
judges them:

- **attrs**: every attr at other values of its domain -- each value of a value set (Paddle's
  InEnum) or dtype set, every axis of its input, other orders and spellings of an axes list,
  other permutations, a range's bounds and values of other sign and size, a bool flipped;
  undeclared ints/floats at a few other values (0, -1, larger), int lists reversed and made
  asymmetric; pairs of bools and value sets set together; a bool or value-set attr together
  with NaN / negative inputs;
- **values**: NaN, +inf, -inf and -0.0 at one element, exact halves of both signs, all
  negative and mixed-sign values (also where the case has only positives), ties; integer
  inputs at the ends of their declared range and just outside it (an undeclared integer input
  at -1, its max + 1 and the dtype's minimum);
- **shapes**: a 0-D case, size-1 dims, one rank more and one less -- where infer_shape and
  reference() accept them.

At most `budget()` derived cases per OpTest case (default DEFAULT_BUDGET; `opkit test
--explore N` or OPKIT_EXPLORE=N), drawn round-robin over the kinds above in an order fixed by
the seed and the case's name, so a report is reproducible. Gradients (analytic against
numeric, float64) are judged on at most GRAD_BUDGET derived cases with finite values.

Verdicts, against the test's `reference(inputs, attrs)` (NaN-aware: NaN exactly where the
reference has NaN, inf where it has inf of the same sign):

- the reference raises -> the op must refuse with an opkit error (a typed EnforceNotMet);
  computing a result, or a raw numpy/Python error, is a failure (a derived rank or 0-D shape
  the reference does not take is skipped instead: the reference may just not cover it);
- the op refuses (an opkit error) an input inside its declared domains that the reference
  computes -> a failure for values of declared value sets, dtype sets, axes and for input
  values; a refusal of a derived shape by infer_shape, or of an undeclared attr value, is not;
- outside a declared domain (an id below 0 for `integers(0, ...)`), a refusal is right, and
  a result is judged only when the reference computes one.

Without a `reference()`, a Paddle-style OpTest's setUp runs again under other seeds of
numpy's global generator (new values, the test's own expected outputs) and the case is
judged on self-consistency: outputs against its own expectation, gradients analytic against
numeric, float64 on CPU.

A failure shows the derived attrs and values and a ready-to-paste OpTest (re-run in a fresh
process before it is printed, as fuzz does).
"""
from __future__ import annotations

from harness.op import proto_of  # noqa: I001
from harness.options import DEFAULT_SEED

import itertools
import zlib
from dataclasses import dataclass, field, replace

import numpy as np

from harness import options
from harness.check import Check, KernelRaised, RawException, WrongValue
from harness.options import DEFAULT_EXPLORE
from harness.case import normalize_slots

__all__ = ["CHECK", "ExploreCheck", "budget", "derive_cases", "DEFAULT_BUDGET",
           "GRAD_BUDGET", "Explored"]

DEFAULT_BUDGET = DEFAULT_EXPLORE   # derived cases per OpTest case (opkit test --explore N)
GRAD_BUDGET = 3         # of those, how many also get a gradient check
SCREEN_BLOCKS = 4       # blocks per random direction of that gradient screen (fast mode: 16)
RESEEDS = 1             # without reference(): setUp re-run under this many other seeds
                        # (one more per 32 of budget: --explore 64 gives 3)
_SKIP_ATTR_WORDS = ("seed", "use_", "is_test", "fix_seed", "mkldnn", "cudnn", "op_role",
                    "op_namescope", "op_callstack", "op_device", "with_quant_attr")


def budget() -> int:
    """The run's budget (harness.options: --explore N, or OPKIT_EXPLORE read by the front
    door)."""
    return options.current().explore


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


# =========================================================================================
# deriving
# =========================================================================================
def _rng(case, seed) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{case.op_type}:{case.name}".encode()) + seed)


def _map_spec(inputs, name, fn):
    """`inputs` with the variable `name`'s array replaced by fn(array) (LoD kept)."""
    from harness.case import as_value, map_inputs

    return map_inputs(inputs, lambda s: as_value(s, fn(s.data)) if s.name == name
                      else as_value(s))


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
        vp = proto.input(slot) if proto is not None else None
        dom = getattr(vp, "domain", None) if vp is not None else None
        for s in items[:1]:
            a = s.data
            if not isinstance(a, np.ndarray) or a.size == 0:
                continue
            k = int(rng.integers(a.size))
            if a.dtype.kind == "f":
                per_input.append(_float_values(case, s, a, k, dom, rng, attrs, shapes))
            elif a.dtype.kind in "iu":
                per_input.append(_int_values(case, s, a, k, dom, attrs, shapes, rng))
            elif a.dtype.kind == "b":
                per_input.append(_bool_values(case, s, a))
    shared = _shared_nan(case, specs, proto, rng)
    if shared:
        per_input.insert(1, shared)
    # one of each input's values in turn: a budget that ends early still covers every input
    return [x for group in itertools.zip_longest(*per_input) for x in group if x is not None]


def _bool_values(case, s, a) -> list[Explored]:
    return [Explored("value", f"{s.name}: all {v}", _map_spec(case.inputs, s.name,
                                                              lambda _, v=v: np.full_like(a, v)),
                     dict(case.attrs or {}), info={"var": s.name})
            for v in (True, False) if not (a == v).all()]


def _shared_nan(case, specs, proto, rng) -> list[Explored]:
    """NaN at the same element of every float input of the first float input's shape
    (NaN against NaN: equality, max/min of two NaNs, equal_nan flags)."""
    floats = [(slot, s) for slot, items in specs.items() for s in items[:1]
              if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f" and s.data.size
              and not s.lengths]
    if len(floats) < 2:
        return []
    shape = floats[0][1].data.shape
    same = [(slot, s) for slot, s in floats if s.data.shape == shape]
    if len(same) < 2:
        return []
    for slot, _ in same:
        vp = proto.input(slot) if proto is not None else None
        dom = getattr(vp, "domain", None) if vp is not None else None
        if dom is not None and not dom.allows_nan():
            return []
    k = int(rng.integers(floats[0][1].data.size))
    names = {s.name for _, s in same}

    def nan_at(s):
        from harness.case import as_value

        if s.name not in names:
            return as_value(s)
        b = s.data.copy()
        b.reshape(-1)[k] = np.nan
        return as_value(s, b)

    from harness.case import map_inputs

    return [Explored("value", f"NaN at the same element of {', '.join(sorted(names))}",
                     map_inputs(case.inputs, nan_at), dict(case.attrs or {}),
                     info={"var": sorted(names)[0]})]


def _float_values(case, s, a, k, dom, rng, attrs, shapes) -> list[Explored]:
    out = []

    def at(value):
        b = a.copy()
        b.reshape(-1)[k] = value
        return b

    def add(note, b, grads=False):
        if dom is not None and not dom.contains(b, attrs=attrs, shapes=shapes):
            return
        out.append(Explored("value", f"{s.name}: {note}", _map_spec(case.inputs, s.name,
                                                                      lambda _: b),
                            dict(case.attrs or {}), strict=dom is not None, grads=grads,
                            info={"var": s.name}))

    idx = np.unravel_index(k, a.shape) if a.ndim else ()
    where = f"[{', '.join(str(int(i)) for i in idx)}]" if a.ndim else ""
    if a.size > 1:
        signs = np.where(rng.random(a.shape) < 0.5, -1.0, 1.0)
        if (signs > 0).all() or (signs < 0).all():
            signs.reshape(-1)[0] *= -1
        add("mixed signs (x with random signs)", (np.abs(a) * signs + 0.0).astype(a.dtype),
            grads=True)
    add(f"NaN at {s.name}{where}", at(np.nan))
    neg = -(np.abs(a) + 0.25)
    add("every value negative (-|x| - 0.25)", neg.astype(a.dtype), grads=True)
    add(f"+inf at {s.name}{where}", at(np.inf))
    halves = (rng.permutation(a.size) % 7 - 3 + 0.5).reshape(a.shape).astype(a.dtype)
    add("exact halves (-2.5 .. 3.5)", halves)
    add(f"-inf at {s.name}{where}", at(-np.inf))
    if a.size > 1:
        add("ties (values rounded to multiples of 0.5)",
            (np.round(a * 2) / 2).astype(a.dtype))
    add(f"-0.0 at {s.name}{where}", at(-0.0))
    return out


def _int_values(case, s, a, k, dom, attrs, shapes, rng) -> list[Explored]:
    out = []
    info = np.iinfo(a.dtype)

    def at(value):
        b = a.copy()
        b.reshape(-1)[k] = value
        return b

    def add(note, value, in_domain):
        if not info.min <= value <= info.max:
            return
        out.append(Explored("value", f"{s.name}: {note}", _map_spec(case.inputs, s.name,
                                                                      lambda _: at(value)),
                            dict(case.attrs or {}), in_domain=in_domain,
                            strict=in_domain and dom is not None, info={"var": s.name}))

    if dom is not None and dom.kind == "integers":
        from opkit.framework.domains import Ref

        lo = dom.lo.resolve(attrs, shapes) if isinstance(dom.lo, Ref) else dom.lo
        hi = dom.hi.resolve(attrs, shapes) if isinstance(dom.hi, Ref) else dom.hi
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
            out.append(Explored("value", f"{s.name}: mixed signs (x with random signs)",
                                _map_spec(case.inputs, s.name, lambda _: b),
                                dict(case.attrs or {}), info={"var": s.name}))
    if info.min < 0:
        add("-1 (a negative integer)", -1, True)
    add(f"{int(a.max()) + 1} (one above the case's largest)", int(a.max()) + 1, True)
    if info.min < 0:
        add(f"{int(info.min)} (the dtype's minimum)", int(info.min), True)
    return out


def _rank_of(specs, name) -> int | None:
    for slot, items in specs.items():
        for s in items:
            if (slot == name or s.name == name) and isinstance(s.data, np.ndarray):
                return s.data.ndim
    return None


def _first_float_rank(specs) -> int | None:
    for items in specs.values():
        for s in items:
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f":
                return s.data.ndim
    return None


def _attr_values(a, value, specs, attrs) -> tuple[list, bool]:
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
        rank = _rank_of(specs, dom.of) if dom.of else _first_float_rank(specs)
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
        cands = []
        if len(vals) > 1:
            cands.append(list(reversed(vals)))
        cands.append([v - rank if v >= 0 else v + rank for v in vals])
        cands += [[i] for i in range(rank) if [i] != vals]
        cands.append(list(range(rank)))
        if rank >= 2:
            cands.append([rank - 1, 0])
        return _unique([c for c in cands if c != vals and c]), True
    if a.type in ("float", "float64"):
        v = float(value) if isinstance(value, (int, float)) else 0.0
        cands = [0.0, -1.0, 0.5, 2.0, 2 * v + 1.0, -v, 10.0]
        if kind == "range":
            for bound, open_ in ((dom.lo, dom.lo_open), (dom.hi, dom.hi_open)):
                if isinstance(bound, (int, float)):
                    cands.append(float(bound) + (1e-3 if bound == dom.lo else -1e-3)
                                 if open_ else float(bound))
        return _unique([c for c in cands if c != v and (kind != "range" or dom.contains(c))
                        and _passes(a, c)]), False
    if a.type in ("int", "long"):
        v = int(value) if isinstance(value, (int, np.integer)) else 0
        cands = [v + 1, v - 1, 0, -1, v + 5, 2 * v + 3]
        if kind == "range":
            for bound, open_ in ((dom.lo, dom.lo_open), (dom.hi, dom.hi_open)):
                if isinstance(bound, (int, float)):
                    b = int(bound) + ((1 if bound == dom.lo else -1) if open_ else 0)
                    cands.append(b)
        return _unique([c for c in cands if c != v and (kind != "range" or dom.contains(c))
                        and _passes(a, c)]), False
    if a.type in ("ints", "longs") and isinstance(value, (list, tuple)) and value:
        vals = [int(x) for x in value]
        cands = []
        if len(vals) > 1 and vals != vals[::-1]:
            cands.append(vals[::-1])
        cands.append([vals[0] + 1] + vals[1:])
        if len(vals) > 1:
            cands.append(vals[:-1] + [vals[-1] + 1])
        return _unique([c for c in cands if c != vals and
                        (kind != "range" or dom.contains(c)) and _passes(a, c)]), False
    return [], False


def _dtype_eq(a, b):
    try:
        return np.dtype(a) == np.dtype(b)
    except TypeError:
        return a == b


def _unique(items):
    out = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def _passes(a, v) -> bool:
    try:
        return all(bool(pred(v)) for _, pred in a.checks)
    except Exception:  # noqa: BLE001
        return False


def _explorable_attrs(proto, attrs):
    for a in getattr(proto, "attrs", []) or []:
        if a.extra or a.generated or (a.name not in attrs and not a.has_default):
            continue
        if any(w in a.name.lower() for w in _SKIP_ATTR_WORDS):
            continue
        yield a, (attrs[a.name] if a.name in attrs else a.default)


def _attr_cases(case, specs, proto) -> tuple[list, list, list]:
    attrs = dict(case.attrs or {})
    singles, discrete = [], []
    for a, value in _explorable_attrs(proto, attrs):
        values, strict = _attr_values(a, value, specs, attrs)
        for v in values:
            new = dict(attrs)
            new[a.name] = v
            is_discrete = a.type == "bool" or (a.domain is not None and
                                               a.domain.kind in ("set", "dtype"))
            # a raw error of the kernel is judged for bools and declared domains; an
            # undeclared int or float value may just be one infer_shape does not check
            lax = a.type != "bool" and a.domain is None
            singles.append(Explored("attr", f"attr {a.name} = {v!r} (the case: {value!r})",
                                    case.inputs, new, strict=strict, grads=True,
                                    info={"attr": a.name, "alts": {a.name: values},
                                          "discrete": is_discrete, "lax": lax}))
        if values and (a.type == "bool" or (a.domain is not None and
                                            a.domain.kind in ("set", "dtype"))):
            discrete.append((a, value, values))
    pairs = []
    for (a1, v1, o1), (a2, v2, o2) in itertools.combinations(discrete, 2):
        for x, y in itertools.product(o1[:3], o2[:3]):
            new = dict(attrs)
            new[a1.name], new[a2.name] = x, y
            pairs.append(Explored("pair", f"attrs {a1.name} = {x!r} and {a2.name} = {y!r} "
                                          f"together (the case: {v1!r}, {v2!r})",
                                  case.inputs, new, strict=False, grads=True,
                                  info={"attr": a1.name}))
    return singles, pairs, discrete


def _shape_cases(case, specs) -> list[Explored]:
    from harness.variants.shapes import cut

    if any(s.lengths for items in specs.values() for s in items):
        return []
    if any(not isinstance(s.data, np.ndarray) for items in specs.values() for s in items):
        return []
    main = next((s for items in specs.values() for s in items
                 if s.data.dtype.kind == "f" and s.data.ndim >= 1), None)
    if main is None:
        return []
    shape = main.data.shape
    out = []

    def same(fn):
        from harness.case import as_value, map_inputs

        return map_inputs(case.inputs, lambda s: as_value(s, fn(s.data))
                          if s.data.shape == shape else as_value(s))

    others = [s.data.shape for items in specs.values() for s in items
              if s.data.ndim and s.data.shape != shape]
    if not others:   # 0-D only where every input is of the one shape (no broadcast operand)
        out.append(Explored("shape", f"0-D inputs (every input of shape {list(shape)} cut to its "
                                     f"first element)", same(lambda a: a.reshape(-1)[:1].reshape(())
                                                             .copy()),
                            dict(case.attrs or {}), grads=True, info={"rank": True}))

    sizes = [d for d in dict.fromkeys(reversed(shape)) if d > 1][:2]
    for d in sizes:
        out.append(Explored("shape", f"dims of size {d} cut to 1", cut(case.inputs, {d: 1}),
                            dict(case.attrs or {}), grads=True))

    def stacked(a):
        # new values; a non-negative input stays non-negative (a declared one-sided domain)
        flip = -0.75 if a.dtype.kind == "f" and not (a >= 0).all() else 0.75
        other = (a * flip + 0.125) if a.dtype.kind == "f" else a
        return np.stack([a, other.astype(a.dtype)])

    out.append(Explored("shape", f"rank {len(shape) + 1} (inputs of shape {list(shape)} "
                                 "stacked with new values along a new leading dim)",
                        same(stacked), dict(case.attrs or {}), grads=True,
                        info={"rank": True, "other_rank": True}))
    if len(shape) >= 2:
        out.append(Explored("shape", f"rank {len(shape) - 1} (inputs of shape {list(shape)} "
                                     "cut to their first row)", same(lambda a: a[0].copy()),
                            dict(case.attrs or {}), grads=True,
                            info={"rank": True, "other_rank": True}))
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
    limit = budget() if limit is None else limit
    proto = proto_of(case.op_type)
    specs = normalize_slots(case.inputs)
    rng = _rng(case, seed)
    singles, pairs, discrete = _attr_cases(case, specs, proto) if proto is not None else \
        ([], [], [])
    values = _value_cases(case, specs, proto, rng)
    shapes = _shape_cases(case, specs)
    combined = _combined_cases(case, singles, values)
    rng.shuffle(pairs)
    groups = [singles, values, shapes, pairs, combined]
    out = []
    for items in itertools.zip_longest(*groups):
        for x in items:
            if x is not None and len(out) < limit:
                out.append(x)
    return out


# =========================================================================================
# judging
# =========================================================================================
def _takes_inputs_and_attrs(fn) -> bool:
    from harness.reproduce import _takes_inputs_and_attrs as takes

    return takes(fn)


def _run_dtype(case) -> str:
    from opkit.registry import op_info

    from harness.context import has_float_inputs

    if not has_float_inputs(case):
        return ""
    cpu = op_info(case.op_type).kernel_places().get("CPU", ())
    return "float64" if "float64" in cpu else ("float32" if "float32" in cpu else "")


def _compile_refuses(case) -> bool:
    """Whether compile-time infer_shape refuses the case (an opkit error)."""
    from harness.context import op_refused, output_slots
    from harness.op import compile_shapes

    try:
        compile_shapes(case, normalize_slots(case.inputs), output_slots(case, case.op_type), {})
    except Exception as exc:  # noqa: BLE001
        return op_refused(exc)
    return False


def _describe(ex: Explored, case) -> str:
    from harness.values import fmt_value

    changed = {k: v for k, v in ex.attrs.items() if (case.attrs or {}).get(k, object()) != v}
    parts = [ex.note]
    if changed:
        parts.append("drawn attrs " + ", ".join(f"{k}={fmt_value(v)}" for k, v in
                                                changed.items()))
    return "; ".join(parts)


class ExploreCheck(Check):
    name = "explore"
    description = ("derived cases across the declared domains: every attr's values (pairs "
                   "too), NaN/inf/-0.0/halves/negatives/ties/integer extremes, 0-D, size-1 "
                   "and other ranks, judged against reference() (NaN-aware)")
    order = 185
    variants = ("case",)

    def applies(self, case, context):
        if budget() == 0:
            return "exploration is off (--explore 0)"
        if getattr(context, "generated", False):
            return "a generated case (fuzz explores its own)"
        proto = proto_of(case.op_type)
        if proto is not None and any(a.name == "seed" for a in proto.attrs):
            return "a random op: derived cases draw other random numbers (see distribution)"
        return None

    def verdict(self, derived, context):
        case = derived.case
        seed = context.seed
        ref = case.reference
        if ref is None or not _takes_inputs_and_attrs(ref):
            return self._reseeded(derived, context, seed)
        self._seed = seed
        results = []
        grads_left = GRAD_BUDGET
        judged = 0
        dtype = _run_dtype(case)
        from harness.context import Combo

        combo = Combo("CPU", dtype)
        try:
            with np.errstate(all="ignore"):
                own = ref(_copy_inputs(case.inputs), dict(case.attrs or {}))
        except Exception as exc:  # noqa: BLE001
            own = exc
        if not isinstance(own, dict) or not own:
            return [self.skipped(case, "reference() does not compute the case's own inputs "
                                       f"({type(own).__name__}): it cannot judge derived "
                                       "cases")]
        for ex in derive_cases(case, seed):
            verdict = self._judge(derived, ex, combo, seed, grads_left > 0 and ex.grads)
            if verdict is None:
                continue
            judged += 1
            if verdict == "grads":
                grads_left -= 1
                continue
            if verdict == "ok":
                continue
            if verdict.status == "unconfirmed":     # harness.confirm: keep exploring; the
                if not any(r.status == "unconfirmed" for r in results):   # first is said
                    results.append(verdict)
                continue
            results = [r for r in results if r.status != "unconfirmed"] + [verdict]
            break     # the first failure is the report
        if not results:
            results.append(self.passed(derived, combo, f"{judged} derived cases agree with "
                                                       "reference()"))
        return results

    # -- one derived case ------------------------------------------------------------------
    def _judge(self, derived, ex: Explored, combo, seed, with_grads):
        """None (not judged), "ok", "grads" (ok, gradients judged) or a failed CheckResult."""
        from harness.context import op_refused
        from harness.messages import raised

        case = derived.case
        try:
            with np.errstate(all="ignore"):
                expected = case.reference(_copy_inputs(ex.inputs), dict(ex.attrs))
            ref_error = None
        except Exception as exc:  # noqa: BLE001
            expected, ref_error = None, exc
        if ref_error is None and (not isinstance(expected, dict) or not expected):
            return None
        if ref_error is None and _structure(expected) != _structure(case.outputs):
            return None      # the attr changes the outputs' structure (split's num, ...)
        if ref_error is not None and ex.kind != "value":
            return None      # the reference does not take this shape or attr value (one
                             # written for the values the test uses): nothing judges it
        new = replace(case, inputs=ex.inputs, attrs=ex.attrs,
                      outputs=expected if ref_error is None else {}, reference=None,
                      name=f"{case.name}[explore]")
        if ex.kind == "shape" and _compile_refuses(new):
            return None      # infer_shape does not accept this rank: not in the contract
        try:
            got = _run(new, combo, seed)
            op_error = None
        except Exception as exc:  # noqa: BLE001
            got, op_error = None, exc
        what = _describe(ex, case)
        if ref_error is not None:
            if op_error is None:
                return self._fail(derived, combo, ex, new, f"{what}: reference() raises "
                                  f"{type(ref_error).__name__}: {_first(ref_error)}, so the "
                                  "input is invalid, but the op computed a result instead of "
                                  "refusing it with an opkit error", kind=WrongValue)
            if op_refused(op_error):
                return "ok"
            result = self._fail(derived, combo, ex, new, f"{what}: reference() raises "
                                f"{type(ref_error).__name__}; the op must refuse the input "
                                f"with an opkit error, it raised {raised(op_error)}",
                                kind=RawException)
            from harness.explore_confirm import undeclared_invalid

            return undeclared_invalid(case, ex, result)
        if op_error is not None:
            if op_refused(op_error):
                if ex.kind != "value" and _compile_refuses(new):
                    return None   # infer_shape refuses the attr value for these inputs
                if ex.in_domain and ex.strict:
                    return self._fail(derived, combo, ex, new, f"{what}: the op refuses an "
                                      "input inside its declared domains that reference() "
                                      f"computes: {_first(op_error)}", kind=KernelRaised)
                return None
            if (ex.info.get("other_rank") or ex.info.get("lax")) and _raw(op_error):
                return None   # infer_shape of many ops does not check the rank: a kernel
                              # written for the case's rank that raises on another is not
                              # judged (wrong values there are)
            return self._fail(derived, combo, ex, new, f"{what}: the op raised "
                              f"{raised(op_error)} where reference() computes a result",
                              kind=KernelRaised)
        problem = _compare(case, expected, got, combo.dtype)
        if problem:
            if ex.kind in ("attr", "pair", "attr+value") and \
                    not _reference_reads(case, ex, expected):
                return None   # reference() ignores the attr here: it cannot judge the op
            from harness.explore_confirm import (confirm_nonfinite, confirm_reference_domain,
                                                 confirm_stacked)

            judged = confirm_reference_domain(self, derived, combo, ex, problem, expected,
                                              got) or confirm_stacked(self, derived, combo, ex, problem, got,
                                     lambda inputs: _run(replace(new, inputs=inputs), combo,
                                                         seed)) \
                or confirm_nonfinite(self, derived, combo, ex, new, what, problem, expected,
                                       got, lambda inputs: _run(replace(new, inputs=inputs),
                                                                combo, seed))
            if judged is not None:
                return judged
            return self._fail(derived, combo, ex, new, f"{what}: {problem}", kind=WrongValue,
                              confirm_check="output")
        if with_grads and case.grad_inputs and _finite_inputs(ex.inputs):
            failure = self._grads(derived, ex, new, combo, seed)
            if failure is not None:
                return failure
            return "grads"
        return "ok"

    def _grads(self, derived, ex, new, combo, seed):
        from harness.grad_judge import check_grad
        from harness.report import FAIL

        case = derived.case
        opts = case.options or {}
        if opts.get("user_defined_grads") or not case.grad_outputs:
            return None
        if combo.dtype != "float64":
            return None
        if not _dense_gradients(new, combo):
            return None   # no dense gradient for these attrs (is_sparse, is_test)
        args = dict(max_relative_error=opts.get("max_relative_error", 0.005),
                    numeric_grad_delta=opts.get("numeric_grad_delta", 0.005),
                    places=("CPU",), dtypes=("float64",), seed=seed)
        try:
            # a screen: fast mode with few blocks per direction (a derived case's wrong
            # gradient is rarely one element among many); a failure is judged again in
            # exact mode below, which names the wrong elements
            got = check_grad(new, list(case.grad_inputs), list(case.grad_outputs),
                             case.no_grad_set, mode=opts.get("grad_mode") or "fast",
                             fast_blocks=SCREEN_BLOCKS, **args)
            if any(r.status == FAIL for r in got) and opts.get("grad_mode") != "exact":
                got = check_grad(new, list(case.grad_inputs), list(case.grad_outputs),
                                 case.no_grad_set, mode="exact", **args)
        except Exception:  # noqa: BLE001 - the gradient check cannot run here
            return None
        bad = [r for r in got if r.status == FAIL]
        if not bad:
            return None
        msg = bad[0].message.split("\nreproduce:")[0]
        if "raised" in msg and "refus" in msg:
            return None
        return self._fail(derived, combo, ex, new, f"{_describe(ex, case)}: gradients, "
                          f"analytic against numeric: {msg}", kind=WrongValue,
                          confirm_check="grad")

    def _fail(self, derived, combo, ex, new, message, kind, confirm_check=None):
        text = message + "\n" + _reproducer(derived.case, new, confirm_check,
                                            getattr(self, "_seed", DEFAULT_SEED))
        return self.failed(derived, combo, text, kind=kind,
                           repro=self.reproduce(derived.base))

    # -- without reference() ---------------------------------------------------------------
    def _reseeded(self, derived, context, seed):
        from harness.context import Combo
        from harness.optest_methods import run_optest_methods
        from harness.discovery import instantiate
        from harness.report import FAIL
        from harness.case import case_from_test

        test = getattr(context, "test", None)
        case = derived.case
        if test is None or getattr(test, "op_type", None) != case.op_type:
            return [self.skipped(case, "no reference(inputs, attrs) and no OpTest to set up "
                                       "again: nothing judges derived cases")]
        dtype = _run_dtype(case)
        judged = 0
        for k in range(1, RESEEDS + budget() // 32 + 1):
            s = seed + 7919 * k
            try:
                again = instantiate(type(test), s)
                new = case_from_test(again)
            except Exception:  # noqa: BLE001 - setUp does not run again
                break
            if _same_inputs(new.inputs, case.inputs):
                return [self.skipped(case, "no reference(inputs, attrs), and setUp draws the "
                                           "same values under other numpy seeds")]
            results = [r for r in run_optest_methods(again, case.name, s)
                       if r.check in ("output", "grad")]
            judged += 1
            bad = [r for r in results if r.status == FAIL]
            if bad:
                what = "outputs against the test's own expectation" if bad[0].check == \
                    "output" else "gradients, analytic against numeric"
                msg = bad[0].message.split("\nreproduce:")[0]
                return [self.failed(derived, Combo("CPU", dtype),
                                    f"setUp re-run under numpy seed {s} (new values): {what}: "
                                    f"{msg}", kind=WrongValue)]
        if not judged:
            return [self.skipped(case, "no reference(inputs, attrs), and setUp could not run "
                                       "again")]
        return [self.passed(derived, Combo("CPU", dtype),
                            f"no reference(): setUp re-run under {judged} other numpy seeds "
                            "agrees with itself")]


# -- helpers --------------------------------------------------------------------------------
def _copy_inputs(inputs):
    from harness.case import as_value, map_inputs

    return map_inputs(inputs, lambda s: as_value(s, s.data.copy()
                                                 if isinstance(s.data, np.ndarray) else s.data))


def _structure(outputs) -> dict:
    return {slot: (len(v) if isinstance(v, list) else None) for slot, v in (outputs or {}).items()}


def _raw(exc) -> bool:
    """A raw numpy/Python error inside a kernel (wrapped as External), not the framework's
    check of the kernel's outputs against infer_shape (a kernel giving other shapes than
    promised is judged)."""
    from opkit.framework import errors

    return isinstance(exc, errors.External) or not isinstance(exc, errors.EnforceNotMet)


def _first(exc) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _run(case, combo, seed) -> dict:
    from harness.context import prepare

    p = prepare(case, combo)
    with np.errstate(all="ignore"):
        p.forward()
    return {n: p.array(n) for n in p.output_names()}


def _compare(case, expected, got, dtype) -> str | None:
    from harness.compare import compare

    opts = case.options or {}
    skip = set(case.no_check_set or ()) | set(opts.get("no_check_set") or ())
    for slot, specs in normalize_slots(expected).items():
        if slot in skip:
            continue
        for s in specs:
            if s.name in skip or not isinstance(s.data, np.ndarray):
                continue
            have = got.get(s.name)
            if have is None:
                continue
            want = np.asarray(s.data)
            have = np.asarray(have)
            if want.dtype.kind == "f" and have.dtype.kind == "f" and want.dtype != have.dtype \
                    and dtype:
                want = want.astype(have.dtype)
            if want.dtype.kind == "b" and have.dtype.kind == "b" or \
                    want.dtype.kind in "iu" and have.dtype.kind in "iu":
                if want.shape == have.shape and np.array_equal(want, have):
                    continue
            msg, _ = compare(s.name, have, want, dtype or want.dtype.name, opts.get("atol"),
                             opts.get("rtol"), True)
            if msg:
                return msg + _nan_note(have, want)
    return None


def _nan_note(have, want) -> str:
    if have.dtype.kind != "f" or want.dtype.kind != "f" or have.shape != want.shape:
        return ""
    with np.errstate(invalid="ignore"):
        lost = np.isnan(want) & ~np.isnan(have)
        made = np.isnan(have) & ~np.isnan(want)
    if lost.any():
        return f" (reference() has NaN at {int(lost.sum())} element(s) where the op does not: " \
               "NaN dropped)"
    if made.any():
        return f" (the op gives NaN at {int(made.sum())} element(s) where reference() does not)"
    return ""


def _reference_reads(case, ex, expected) -> bool:
    """Whether reference() reads every attr the derived case changed: with that attr at the
    case's value or at another derived value, it gives other outputs on the same inputs
    (else it ignores that attr -- a reference written for the one value the test uses --
    and cannot judge the op's outputs for it)."""
    from harness.compare import same_value as _same

    proto = proto_of(case.op_type)
    base = dict(case.attrs or {})
    for k, v in ex.attrs.items():
        old = base[k] if k in base else getattr(proto.attr(k) if proto else None,
                                                 "default", None)
        if k in base and base[k] == v or old is None or old == v:
            continue
        tries = [old] + [x for x in ex.info.get("alts", {}).get(k, []) if x != v][:3]
        reads = False
        for value in tries:
            attrs = dict(ex.attrs)
            attrs[k] = value
            try:
                with np.errstate(all="ignore"):
                    other = case.reference(_copy_inputs(ex.inputs), attrs)
            except Exception:  # noqa: BLE001
                continue
            if not _same(other, expected):
                reads = True
                break
        if not reads:
            return False
    return True


def _dense_gradients(case, combo) -> bool:
    """False when the op refuses gradients for this case on purpose (a typed opkit error
    outside the framework's output-shape check: dropout's grad with is_test) or gives them
    in another form (a sparse gradient with is_sparse)."""
    from harness.context import grad_outputs, op_refused, prepare
    from harness.op import make_cotangents

    try:
        p = prepare(case, combo)
        outs = p.forward()
        outs = {n: p.array(n) for n in p.output_names()}
        cot = make_cotangents(outs, grad_outputs(case, outs))
        cot = {n: c.astype(outs[n].dtype) for n, c in cot.items()}
        got = p.backward(cot, list(case.grad_inputs), tuple(case.no_grad_set or ()))
    except Exception as exc:  # noqa: BLE001
        return not op_refused(exc)
    return all(isinstance(g, np.ndarray) for g in got.values())


def _finite_inputs(inputs) -> bool:
    for items in normalize_slots(inputs).values():
        for s in items:
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f" and \
                    not np.all(np.isfinite(s.data)):
                return False
    return True


def _same_inputs(a, b) -> bool:
    from harness.compare import same_value as _same

    try:
        xa, xb = normalize_slots(a), normalize_slots(b)
        return xa.keys() == xb.keys() and all(
            len(xa[k]) == len(xb[k]) and all(_same(x.data, y.data) for x, y in zip(xa[k], xb[k]))
            for k in xa)
    except Exception:  # noqa: BLE001
        return False


def _reproducer(base, new, check, seed) -> str:
    """A ready-to-paste OpTest of the derived case (confirmed in a fresh process when the
    failure is a wrong output or gradient)."""
    from harness.reproduce import format_optest

    case = replace(new, name=base.name, grad_inputs=list(base.grad_inputs) if check == "grad"
                   else [], grad_outputs=list(base.grad_outputs))
    cls = base.name.split("[")[0].split("::")[-1] or "TestExplore"
    cls = "".join(ch for ch in cls if ch.isalnum() or ch == "_") or "TestExplore"
    try:
        text = format_optest(case, cls).replace("self.check_output()",
                                                "self.check_output(equal_nan=True)")
    except Exception:  # noqa: BLE001
        return ""
    if new.outputs:     # reference() computed them: the op must too
        note = ("# (a case the op must compute: reference() gives these outputs; run it to "
                "see the op raise or refuse it)")
    else:
        note = "# (a case the op must refuse: run it to see the op compute or raise)"
    if check is not None:
        from harness.context import grad_op_types
        from harness.reproduce import NOT_REPRODUCED, confirm

        again = confirm([case.op_type] + grad_op_types(case), text, f"{cls}Minimal", check,
                        seed)
        note = {True: "# re-run in a fresh process before printing: it fails there too",
                False: f"# {NOT_REPRODUCED}",
                None: "# (could not be re-run in a fresh process)"}[again]
    return f"minimal case:\n{text}{note}"


CHECK = ExploreCheck()
