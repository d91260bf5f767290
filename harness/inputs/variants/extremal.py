"""`extremal`: the case's float inputs at extreme values -- "large", "zero_rows", "tiny"
(docs/harness.md, "Input variants"; the magnitudes per dtype: docs/low_precision.md)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.case import Derived, Unsupported, as_value, map_inputs, normalize_slots
from harness.op import proto_of  # noqa: I001
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
    return [Derived("extremal", map_floats(case, fn, kind), case, f"{kind} float inputs",
                    {"kind": kind}) for kind, fn in KINDS.items()]
