"""`extremal`: the case's float inputs at extreme values, three derived cases:

- "large": every float input scaled so its largest magnitude is 100 (past where `exp`
  overflows in float32, 88.7, far from where it overflows in float64);
- "zero_rows": the first row (leading index 0) of every float input all zero;
- "tiny": every float input scaled by 1e-30 (small but normal in float32).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.checks.base import Derived, Unsupported
from harness.runner import normalize_slots

LARGE = 100.0
TINY = 1e-30


def _large(a):
    m = float(np.max(np.abs(a))) if a.size else 0.0
    return a * (LARGE / m) if m > 0 else np.full_like(a, LARGE)


def _zero_rows(a):
    b = a.copy()
    if b.ndim and b.shape[0]:
        b[0] = 0
    return b


def _tiny(a):
    return a * TINY


KINDS = {"large": _large, "zero_rows": _zero_rows, "tiny": _tiny}


def map_floats(case, fn, suffix):
    specs = normalize_slots(case.inputs)
    inputs = {}
    for slot, value in case.inputs.items():
        items = specs.get(slot)
        if items is None:
            inputs[slot] = value
            continue
        new = []
        for s in items:
            d = s.data
            if isinstance(d, np.ndarray) and d.dtype.kind == "f" and d.size:
                d = fn(d.astype(np.float64)).astype(d.dtype)
            new.append((s.name, (d, s.lengths) if s.lengths else d))
        inputs[slot] = new if isinstance(value, list) else new[0][1]
    return replace(case, inputs=inputs, outputs={}, name=f"{case.name}[{suffix}]")


def derive(case, context=None):
    floats = [s for ss in normalize_slots(case.inputs).values() for s in ss
              if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f" and s.data.size]
    if not floats:
        return Unsupported("extremal", "the case has no non-empty float input")
    out = []
    for kind, fn in KINDS.items():
        out.append(Derived("extremal", map_floats(case, fn, kind), case,
                           f"{kind} float inputs", {"kind": kind}))
    return out
