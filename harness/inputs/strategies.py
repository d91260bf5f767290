"""Hypothesis strategies for op cases (arrays shaped like a test's own, attrs within their
checkers' ranges, LoD with empty sequences) and `falsify`, the seeded reproducible search
that fuzz and explore run them with (docs/harness.md, "Fuzzing": the public strategies)."""
from __future__ import annotations

import ast
import contextlib
import math
import re
import zlib

import numpy as np
from hypothesis import strategies as st

from harness.inputs.explore import _passes

__all__ = ["shapes_around", "arrays_like", "attr_values", "attrs_for", "lengths",
           "lod_tensors", "case_inputs", "float_elements", "falsify", "reproducible_draws",
           "prepare_hypothesis"]

SHRINK_CALLS = 60   # shrinking a failure stops after this many more calls (the last failing
                    # value is reported: it still fails, it is just not the smallest). A count,
                    # not a time: the report must not depend on the machine's load


@contextlib.contextmanager
def reproducible_draws():
    """Hypothesis mixes into its draws the constants of every non-library module loaded so
    far (`providers._get_local_constants`), so the same seed gave another generated case
    depending on which ops and tests the process had imported (`--all` against one op, the
    fork pool against xdist). Inside this, it draws with no local constants: a case is a
    function of the OpTest and the seed. (A hypothesis without that hook: nothing to do.)"""
    try:
        from hypothesis.internal.conjecture import providers
        real, empty = providers._get_local_constants, providers.Constants()
    except (ImportError, AttributeError):
        yield
        return
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = real


def prepare_hypothesis() -> None:
    """One-time set-up of hypothesis, done by `opkit test` before it forks its workers:
    hypothesis registers its global Random on first use with a full `gc.collect()` (~70 ms in
    a loaded process) and imports its engine lazily on the first run (~80 ms), which every
    forked worker would otherwise pay again."""
    try:
        from hypothesis.internal.entropy import deterministic_PRNG
    except ImportError:
        return
    with deterministic_PRNG():
        pass
    falsify(lambda **_: False, 0, 1, x=st.lists(st.tuples(st.integers(0, 1), st.floats(0, 1))))


class _Falsified(Exception):
    pass


def falsify(fails, seed: int, max_examples: int, shrink_calls: int = SHRINK_CALLS,
            **strategies):
    """The drawn values ({name: value}, one per strategy) that `fails(**values)` is true on,
    shrunk by hypothesis to the simplest it finds, or None when none of `max_examples` draws
    fails. `fails` gives True (a failure), False (a pass) or None (not a valid case:
    rejected). Reproducible: seeded by `seed`, no example database written anywhere, draws
    independent of the loaded modules; shrinking stops after `shrink_calls` more calls (the
    last failing values are returned). Hypothesis giving up (Unsatisfiable) raises."""
    from hypothesis import HealthCheck, Verbosity, assume, given, settings
    from hypothesis import seed as hyp_seed

    found: dict = {}

    @hyp_seed(seed)
    @settings(max_examples=max(1, max_examples), deadline=None, database=None,
              derandomize=False, suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, print_blob=False, verbosity=Verbosity.quiet)
    @given(**strategies)
    def prop(**values):
        if "calls" in found:
            found["calls"] += 1
            if found["calls"] > shrink_calls:
                return       # the shrink budget is spent: the last failing value is the report
        verdict = fails(**values)
        assume(verdict is not None)
        if verdict:
            found.setdefault("calls", 0)
            found["values"] = values
            raise _Falsified

    # no example database (database=None): no key to derive, which hypothesis would do by
    # reading and hashing prop's source on every call (~8 ms each)
    prop._hypothesis_internal_database_key = None
    with reproducible_draws():
        try:
            prop()
        except _Falsified:
            pass
    return found.get("values")


def shapes_around(shape, delta: int = 2, min_side: int = 1, max_side: int = 12):
    """Shapes of the same rank, each side within `delta` of the given one."""
    return st.tuples(*[st.integers(max(min_side, d - delta),
                                   max(min_side, d - delta, min(max_side, d + delta)))
                       for d in shape])


def float_elements(dtype="float64", low: float = -1.0, high: float = 1.0):
    width = 32 if np.dtype(dtype) == np.float32 else 64
    return st.floats(low, high, allow_nan=False, allow_infinity=False, width=width)


def _value_range(array) -> tuple[float, float]:
    a = np.asarray(array)
    if a.size == 0 or a.dtype.kind not in "fiu":
        return -1.0, 1.0
    lo, hi = float(np.min(a)), float(np.max(a))
    if lo == hi:
        lo, hi = lo - 1.0, hi + 1.0
    return lo, hi


def _distinct_arrays(values: np.ndarray, dtype, shape):
    """Arrays of `shape` (a strategy) filled with distinct entries of `values` in a drawn
    order (a seeded permutation: fast at any size; Hypothesis still shrinks the shape)."""
    def build(pair):
        return _fill_distinct(values, pair[0], pair[1], dtype)

    return st.tuples(shape, st.integers(0, 2 ** 32 - 1)).map(build)


def _fill_distinct(values, shape, seed, dtype) -> np.ndarray:
    """An array of `shape` of distinct entries of `values` in a seeded order (repeated when
    there are not enough distinct values to be had)."""
    size = int(np.prod(shape, dtype=np.int64))
    pool = values if size <= values.size else _distinct_values(values, size)
    order = np.random.default_rng(seed).permutation(pool.size)[:size]
    return np.resize(pool[order], shape).astype(dtype)


def _distinct_values(a, wanted: int) -> np.ndarray:
    """The distinct finite values of `a`, exactly representable in float32 (a generated case
    then means the same in float32 and float64), refined by midpoints between neighbours
    until there are at least `wanted` of them."""
    values = np.unique(a[np.isfinite(a)].astype(np.float32).astype(np.float64))
    wanted = min(max(wanted, 1), 1 << 16)
    while 1 < values.size < wanted:
        mids = ((values[:-1] + values[1:]) / 2).astype(np.float32).astype(np.float64)
        grown = np.unique(np.concatenate([values, mids]))
        if grown.size == values.size:     # adjacent float32 neighbours: no midpoint exists
            break
        values = grown
    if values.size > max(wanted, 4096):
        values = values[np.linspace(0, values.size - 1, max(wanted, 4096)).astype(int)]
    return values


def arrays_like(array, shape=None, delta: int = 2, elements=None):
    """Arrays of the same dtype and rank as `array` (its shape, or `shape`, or one around it)
    with values in `array`'s range."""
    from hypothesis.extra.numpy import arrays

    a = np.asarray(array)
    if shape is None:
        shape = shapes_around(a.shape, delta) if a.ndim else st.just(())
    elif isinstance(shape, tuple):
        shape = st.just(shape)
    if elements is None:
        lo, hi = _value_range(a)
        if a.dtype.kind == "f" and a.size:
            # the test's own values (the author kept them away from kinks and clip points),
            # each used at most once: values drawn with replacement tie (and Hypothesis
            # shrinks toward ties), and at a tie max/top_k/sort have no gradient and float32
            # normalisations lose their precision -- a generated case must not be
            # ill-posed where the author's was not
            # (the size bound: `a`'s shape, each side +2 and at most 12)
            size = int(np.prod([min(12, d + 2) for d in a.shape], dtype=np.int64))
            values = _distinct_values(a, size)
            if values.size >= size:
                return _distinct_arrays(values, a.dtype, shape)
            elements = st.sampled_from([v.item() for v in values]) if values.size else \
                float_elements(a.dtype, lo, hi)
        elif a.dtype.kind == "f":
            elements = float_elements(a.dtype, lo, hi)
        elif a.dtype.kind in "iu":
            elements = st.integers(int(lo), int(hi))
        elif a.dtype.kind == "b":
            elements = st.booleans()
        else:
            return st.just(a.copy())
    return arrays(a.dtype, shape, elements=elements)


_BOUND = re.compile(r"^(>=|>|<=|<) (.+)$")


def _checker_bounds(attr):
    lo = hi = choices = None
    for description, _ in attr.checks:
        m = _BOUND.match(description)
        if m:
            try:
                bound = float(m.group(2))
            except ValueError:
                continue
            if m.group(1).startswith(">"):
                lo = bound if lo is None else max(lo, bound)
            else:
                hi = bound if hi is None else min(hi, bound)
        elif description.startswith("in "):
            try:
                choices = list(ast.literal_eval(description[3:]))
            except (ValueError, SyntaxError):
                pass
    return lo, hi, choices


def attr_values(attr, base=None):
    """Values for one AttrProto: its `in_set` values, numbers within its checkers' range
    (around `base` when given), booleans; other types keep `base` (or the default)."""
    lo, hi, choices = _checker_bounds(attr)
    keep = base if base is not None else (attr.default if attr.has_default else None)
    if choices:
        strategy = st.sampled_from(choices)
    elif attr.type in ("float", "float64"):
        centre = float(keep) if isinstance(keep, (int, float)) else 0.0
        low = lo if lo is not None else centre - max(1.0, abs(centre))
        high = hi if hi is not None else centre + max(1.0, abs(centre))
        strategy = st.floats(low, high, allow_nan=False, allow_infinity=False,
                             exclude_min=lo is not None, exclude_max=hi is not None)
    elif attr.type in ("int", "long"):
        centre = int(keep) if isinstance(keep, (int, float)) and not isinstance(keep, bool) \
            else 0
        low = math.floor(lo) + 1 if lo is not None else centre - 3
        high = math.ceil(hi) - 1 if hi is not None else centre + 3
        strategy = st.integers(int(low), int(max(low, high)))
    elif attr.type == "bool":
        strategy = st.booleans()
    else:
        return st.just(keep)
    return strategy.filter(lambda v: _passes(attr, v))


def attrs_for(proto, base: dict | None = None, vary=None):
    """A dict of attrs for an OpProto: every attr in `vary` (default: all that have a value)
    drawn with `attr_values`; the others keep `base` (or their default)."""
    base = dict(base or {})
    fields = {}
    for attr in proto.attrs:
        if attr.extra or attr.generated:
            continue
        given = base.get(attr.name)
        if vary is not None and attr.name not in vary:
            if given is not None:
                fields[attr.name] = st.just(given)
            continue
        if given is None and not attr.has_default:
            continue
        fields[attr.name] = attr_values(attr, given)
    return st.fixed_dictionaries(fields)


def lengths(max_sequences: int = 5, max_length: int = 4, min_sequences: int = 1):
    """One LoD level as sequence lengths, empty sequences (0) included."""
    return st.lists(st.integers(0, max_length), min_size=min_sequences, max_size=max_sequences)


def case_inputs(inputs: dict, delta: int = 2, max_side: int = 12):
    """A new `inputs` dict like the given one (Paddle OpTest format). Every distinct
    dimension size is remapped to one new size, so equal dims stay equal (elementwise ops,
    the K of mul); LoD inputs get new lengths (empty sequences included)."""
    sizes = set()
    for value in inputs.values():
        for item in (value if isinstance(value, list) else [("", value)]):
            data = item[1]
            arr = data[0] if isinstance(data, tuple) else data
            if isinstance(arr, np.ndarray):
                sizes.update(arr.shape)
    return _case_inputs(inputs, sorted(sizes), delta, max_side)


# composites are decorated once, at module level: hypothesis reads a composite function's
# source when it decorates it (~1.5 ms), which a decoration per call paid every time
@st.composite
def _case_inputs(draw_, inputs, sizes, delta, max_side):
    remap = {s: draw_(st.integers(max(1, s - delta),
                                  max(1, s - delta, min(max_side, s + delta))))
             for s in sizes}
    return {slot: [(name, draw_(_one(data, remap))) for name, data in value]
            if isinstance(value, list) else draw_(_one(value, remap))
            for slot, value in inputs.items()}


def _one(data, remap):
    if isinstance(data, tuple) and len(data) == 2:
        arr = np.asarray(data[0])
        drawn = lod_tensors((arr.dtype,), tuple(remap.get(d, d) for d in arr.shape[1:]),
                            levels=len(data[1]) or 1)
        if arr.dtype.kind != "f" or not arr.size:
            return drawn
        values = _distinct_values(arr, arr.size)

        def untie(pair):
            # the drawn rows, refilled with distinct values of the test (see arrays_like)
            rows, lod = pair
            if rows.size == 0:
                return pair
            seed = zlib.crc32(np.ascontiguousarray(rows).tobytes())
            return _fill_distinct(values, rows.shape, seed, rows.dtype), lod

        return drawn.map(untie)
    if isinstance(data, np.ndarray):   # (arrays_like keeps one of another kind as it is)
        return arrays_like(data, shape=tuple(remap.get(d, d) for d in data.shape))
    return st.just(data)


def lod_tensors(dtypes=("float32", "float64"), feature_shape=(3,), num_sequences=(0, 8),
                p_empty=0.3, levels: int = 1, max_len: int = 6, *, elements=None):
    """(array, recursive_sequence_lengths) with empty sequences at any position.

    * `dtypes`: the dtypes to draw from; `feature_shape`: the dims after the first;
    * `num_sequences`: (min, max) sequences of the top level (0 allowed: a LoD `[[]]`-like
      empty batch is drawn as `[[]]` only when min is 0);
    * `p_empty`: the probability that a sequence is empty; the others have 1..`max_len` rows
      (or sub-sequences, for the upper levels of a `levels`-level LoD);
    * the array has `sum(last level)` rows (0 for an all-empty batch), values in [-1, 1]."""
    if isinstance(dtypes, (str, np.dtype)):
        dtypes = (dtypes,)
    lo, hi = (num_sequences,) * 2 if isinstance(num_sequences, int) else tuple(num_sequences)
    return _lod_tensors(tuple(dtypes), tuple(feature_shape or ()), lo, hi, float(p_empty),
                        levels, max_len, elements)


@st.composite
def _lod_tensors(draw_, dtypes, feature_shape, lo, hi, p_empty, levels, max_len, elements):
    from hypothesis.extra.numpy import arrays

    def one_length():
        return st.floats(0.0, 1.0).flatmap(
            lambda u: st.just(0) if u < p_empty else st.integers(1, max(1, max_len)))

    dt = np.dtype(draw_(st.sampled_from(list(dtypes))))
    lod = []
    count = draw_(st.integers(lo, hi))
    for _ in range(max(1, levels)):
        lod.append(draw_(st.lists(one_length(), min_size=count, max_size=count)))
        count = sum(lod[-1])
    if elements is None and dt.kind == "f":
        elements = float_elements(dt)
    elif elements is None and dt.kind in "iu":
        elements = st.integers(-100 if dt.kind == "i" else 0, 100)
    return draw_(arrays(dt, (count,) + feature_shape, elements=elements)), lod
