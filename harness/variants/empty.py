"""`empty`: a zero-size variant of the case: the leading (batch) dimension of every input that
shares the batch size of the first float input becomes 0; a LoD input becomes an all-empty
batch (the same number of sequences, each of length 0)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.checks.base import Derived, Unsupported
from harness.runner import as_value, map_inputs, normalize_slots


def _zero(data: np.ndarray) -> np.ndarray:
    return np.zeros((0,) + data.shape[1:], dtype=data.dtype)


def derive(case, context=None):
    specs = normalize_slots(case.inputs)
    floats = [s for ss in specs.values() for s in ss
              if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f" and s.data.ndim]
    if not floats:
        return Unsupported("empty", "the case has no float input with a batch dimension")
    lod = [s for s in floats if s.lengths]
    batch = floats[0].data.shape[0]
    if batch == 0:
        return Unsupported("empty", "the case is already empty")
    def zeroes(s):
        d = s.data
        return isinstance(d, np.ndarray) and d.ndim and d.shape[0] == batch and \
            (not lod or s.lengths or d.dtype.kind == "f")

    if any(zeroes(s) and s.lengths and len(s.lengths) > 1 for ss in specs.values() for s in ss):
        return Unsupported("empty", "multi-level LoD inputs are not emptied")
    zeroed = []

    def one(s):
        if not zeroes(s):
            return as_value(s)
        zeroed.append(s.name)
        if s.lengths:
            return _zero(s.data), [[0] * len(s.lengths[-1])]
        return _zero(s.data)

    inputs = map_inputs(case.inputs, one)
    derived = replace(case, inputs=inputs, outputs={}, reference=None,
                      name=case.name + "[empty]")
    return Derived("empty", derived, case, f"zero-size batch in {', '.join(zeroed)}",
                   {"batch": batch, "zeroed": zeroed})
