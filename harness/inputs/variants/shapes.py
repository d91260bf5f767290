"""Edge shapes of a case, cut out of its own inputs: what `fuzz` judges against reference()
(docs/harness.md, "Edge shapes"): "edge_shapes" (a batch of 1, odd sizes; each size cut the
same way in every input) and "broadcast_ones" (a lower-rank input's first dim cut to 1).
`derive` keeps the cuts reference() accepts with the case's output structure."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from opkit.framework.dtypes import is_float

from harness.backend.case import Derived, output_structure

__all__ = ["derive", "cut"]


def _cut_array(a, remap):
    a = np.asarray(a)
    return a[tuple(slice(0, remap.get(d, d)) for d in a.shape)].copy()


def cut(inputs: dict, remap: dict) -> dict:
    """`inputs` (OpTest format) with every dim of size s cut to remap[s]."""
    return {slot: [(n, _cut_array(v, remap)) for n, v in value] if isinstance(value, list)
            else _cut_array(value, remap) for slot, value in inputs.items()}


def _edge_remap(inputs) -> dict:
    arrays = [v for value in inputs.values()
              for v in ([item[1] for item in value] if isinstance(value, list) else [value])]
    floats = [a for a in arrays if isinstance(a, np.ndarray) and is_float(a.dtype) and a.ndim]
    if not floats:
        return {}
    remap = {}
    batch = floats[0].shape[0]
    if batch > 1:
        remap[batch] = 1
    for a in floats:
        for d in a.shape:
            if d not in remap and d >= 2 and d % 2 == 0:
                remap[d] = d - 1
    return remap


def _broadcast_slot(inputs):
    """The slot of a plain float input whose rank is below another float input's and whose
    first dim is above 1, or None."""
    ranks = {slot: np.asarray(v).ndim for slot, v in inputs.items()
             if isinstance(v, np.ndarray) and is_float(v.dtype)}
    top = max(ranks.values(), default=0)
    return next((slot for slot, r in ranks.items() if 1 <= r < top and inputs[slot].shape[0] > 1),
                None)


def derive(case, context=None):
    if case.reference is None:
        return []
    if any(isinstance(v, tuple) for v in case.inputs.values()) or any(
            isinstance(v, list) and any(isinstance(x[1], tuple) for x in v)
            for v in case.inputs.values()):
        return []   # LoD inputs: their lengths would have to be cut too
    out, tries = [], []
    remap = _edge_remap(case.inputs)
    if remap:
        note = ", ".join(f"{s} -> {t}" for s, t in sorted(remap.items()))
        tries.append((cut(case.inputs, remap), f"dims cut: {note} (batch of 1, odd sizes)",
                      "edge_shapes"))
    slot = _broadcast_slot(case.inputs)
    if slot is not None:
        first = case.inputs[slot].shape[0]
        inputs = dict(case.inputs)
        inputs[slot] = np.asarray(case.inputs[slot])[:1].copy()
        tries.append((inputs, f"{slot}'s first dim cut from {first} to 1 (a size-1 "
                              f"broadcast dim)", "broadcast_ones"))
    for inputs, note, kind in tries:
        try:
            outputs = case.reference(inputs, dict(case.attrs))
        except Exception:  # noqa: BLE001 - the reference does not take these shapes
            continue
        if not outputs or output_structure(outputs) != output_structure(case.outputs):
            continue
        derived = replace(case, inputs=inputs, outputs=outputs,
                          name=f"{case.name}[{kind}]")
        out.append(Derived(kind, derived, case, note))
    return out
