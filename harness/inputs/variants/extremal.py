"""`extremal`: the case's float inputs at extreme values -- "large", "zero_rows", "tiny",
"max_finite" (one element at the dtype's largest finite value) and "spread" (magnitudes over
the dtype's whole exponent range inside each input) (docs/harness.md, "Input variants"; the
magnitudes per dtype: docs/low_precision.md)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.backend.case import Derived, Unsupported, as_value, map_inputs, normalize_slots
from harness.backend.seam import proto_of  # noqa: I001
from opkit.framework.domains import input_allows
from opkit.framework.dtypes import finfo, is_float, max_finite

LARGE = 100.0
TINY = 1e-30


def _large(a, dtype):
    large = min(LARGE, max_finite(dtype))
    m = float(np.max(np.abs(a))) if a.size else 0.0
    if m <= 0:
        return np.full_like(a, large)
    b = a * (large / m)
    return b if b.max() >= large * 0.99 else -b    # +100 is there (exp overflows upwards)


def _zero_rows(a, dtype):
    b = a.copy()
    if b.ndim and b.shape[0]:
        b[0] = 0
    return b


def _tiny(a, dtype):
    normal = float(finfo(dtype).smallest_normal)
    if TINY >= 16 * normal:
        return a * TINY
    m = float(np.max(np.abs(a))) if a.size else 0.0     # float16: 1e-30 would be 0
    return a * (4 * normal / m) if m > 0 else a


def _range_dtype(dtype):
    """float32's range for float32 and float64 cases (a float64 case also runs as float32),
    the dtype's own for float16 / bfloat16."""
    return np.float32 if np.dtype(dtype).itemsize >= 4 else dtype


def _max_finite(a, dtype):
    """Flat element 0 at the largest finite value: a kernel that squares, sums or exps it
    on the way to a representable result (lerp's y - x, a naive softmax) overflows."""
    b = a.copy()
    b.reshape(-1)[0] = max_finite(_range_dtype(dtype))
    return b


def _spread(a, dtype):
    """Magnitudes 2**e with e spread from the dtype's smallest normal exponent to 5/8 of its
    largest (every few elements of any row far apart), alternating signs: a norm or a
    variance that squares before it scales overflows (or underflows) where the result is
    representable; a product with another input of ordinary size does not."""
    fi = finfo(_range_dtype(dtype))
    lo, hi, n = int(fi.minexp) + 2, int(fi.maxexp) * 5 // 8, a.size
    k = np.arange(n)
    e = lo + np.round((hi - lo) * ((k * 7919) % n) / max(n - 1, 1))
    return (np.where(k % 3 == 1, -1.0, 1.0) * np.exp2(e)).reshape(a.shape)


KINDS = {"large": _large, "zero_rows": _zero_rows, "tiny": _tiny}
WIDE = {"max_finite": _max_finite, "spread": _spread}   # inputs of 2 elements or more


def map_floats(case, fn, suffix, wide=False):
    """The case with `fn` applied to its float inputs (wide: to the first of 2 elements or
    more only, so that no two extreme inputs meet in a product)."""
    first = next((s.name for ss in normalize_slots(case.inputs).values() for s in ss
                  if isinstance(s.data, np.ndarray) and is_float(s.data.dtype)
                  and s.data.size > 1), None)

    def one(s):
        d = s.data
        if isinstance(d, np.ndarray) and is_float(d.dtype) and d.size and \
                (not wide or s.name == first):
            with np.errstate(all="ignore"):
                new = fn(d.astype(np.float64), d.dtype).astype(d.dtype)
            # an input's declared domain (docs/domains.md) bounds what is derived: values
            # outside it are no input the op has to take (a wide kind tries |values| too)
            for cand in (new, np.abs(new)) if wide else (new,):
                if input_allows(proto_of(case.op_type), case.inputs, case.attrs, s.name, cand):
                    d = cand
                    break
        return as_value(s, d)

    return replace(case, inputs=map_inputs(case.inputs, one), outputs={},
                   name=f"{case.name}[{suffix}]")


def derive(case, context=None):
    floats = [s for ss in normalize_slots(case.inputs).values() for s in ss
              if isinstance(s.data, np.ndarray) and is_float(s.data.dtype) and s.data.size]
    if not floats:
        return Unsupported("extremal", "the case has no non-empty float input")
    out = [Derived("extremal", map_floats(case, fn, kind), case, f"{kind} float inputs",
                   {"kind": kind}) for kind, fn in KINDS.items()]
    if any(s.data.size > 1 for s in floats):
        out += [Derived("extremal", map_floats(case, fn, kind, wide=True), case,
                        f"{kind} float inputs", {"kind": kind}) for kind, fn in WIDE.items()]
    return out
