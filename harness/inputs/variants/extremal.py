"""`extremal`: the case's float inputs at extreme values, three derived cases:

- "large": every float input scaled so its largest magnitude is 100, and its largest value
  +100 (the sign flipped when needed) (past where `exp`
  overflows in float32, 88.7, far from where it overflows in float64);
- "zero_rows": the first row (leading index 0) of every float input all zero;
- "tiny": every float input scaled by 1e-30 (small but normal in float32).

The magnitudes respect the input's dtype (opkit.framework.dtypes): "large" is at most the
dtype's largest finite value, and a float16 input, whose smallest normal is about 6.1e-5
(1e-30 would be 0), is scaled so its largest magnitude is 4x that smallest normal instead.
bfloat16 inputs (numpy kind 'V') are float inputs here too.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.case import Derived, Unsupported, as_value, map_inputs, normalize_slots
from harness.op import proto_of  # noqa: I001
from opkit.framework.domains import input_allows
from opkit.framework.dtypes import finfo, is_float, max_finite

LARGE = 100.0
TINY = 1e-30


def _large(a, dtype=np.float64):
    large = min(LARGE, max_finite(dtype))
    m = float(np.max(np.abs(a))) if a.size else 0.0
    if m <= 0:
        return np.full_like(a, large)
    b = a * (large / m)
    return b if b.max() >= large * 0.99 else -b    # +100 is there (exp overflows upwards)


def _zero_rows(a, dtype=np.float64):
    b = a.copy()
    if b.ndim and b.shape[0]:
        b[0] = 0
    return b


def _tiny(a, dtype=np.float64):
    normal = float(finfo(dtype).smallest_normal)
    if TINY >= 16 * normal:
        return a * TINY
    m = float(np.max(np.abs(a))) if a.size else 0.0     # float16: 1e-30 would be 0
    return a * (4 * normal / m) if m > 0 else a


KINDS = {"large": _large, "zero_rows": _zero_rows, "tiny": _tiny}


def map_floats(case, fn, suffix):
    def one(s):
        d = s.data
        if isinstance(d, np.ndarray) and is_float(d.dtype) and d.size:
            new = fn(d.astype(np.float64), d.dtype).astype(d.dtype)
            # an input's declared domain (docs/domains.md) bounds what is derived: values
            # outside it are no input the op has to take
            if input_allows(proto_of(case.op_type), case.inputs, case.attrs, s.name, new):
                d = new
        return as_value(s, d)

    return replace(case, inputs=map_inputs(case.inputs, one), outputs={},
                   name=f"{case.name}[{suffix}]")


def derive(case, context=None):
    floats = [s for ss in normalize_slots(case.inputs).values() for s in ss
              if isinstance(s.data, np.ndarray) and is_float(s.data.dtype) and s.data.size]
    if not floats:
        return Unsupported("extremal", "the case has no non-empty float input")
    out = []
    for kind, fn in KINDS.items():
        out.append(Derived("extremal", map_floats(case, fn, kind), case,
                           f"{kind} float inputs", {"kind": kind}))
    return out


