"""Edge shapes of a case, cut out of its own inputs: what `fuzz` judges against reference().

- "edge_shapes": the batch (dim 0 of the first float input) cut to 1 and every other even
  dim size s cut to s - 1 (odd). Each distinct size is cut the same way in every input,
  as the fuzzer remaps dims, so shapes that must agree still agree. Bug class: `np.squeeze`
  that drops a batch of 1, loops in blocks of 2 or 4 that leave an odd tail, `n // 2`
  off-by-ones;
- "broadcast_ones": an input of lower rank than another (a broadcast operand: elementwise
  Y, a bias) with its first dim cut to 1. Bug class: a broadcast gradient summed over the
  missing leading dims only, not over Y's own size-1 dims.

The values are the test's own (a leading slice of each input, so no new ties); a case with
LoD inputs is left alone (its lengths would have to be cut too). `derive` gives the Derived
cases whose reference() accepts the new inputs with the case's output structure; the op may
still refuse them (then `fuzz` does not judge them).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from opkit.framework.dtypes import is_float

from harness.case import Derived, output_structure

__all__ = ["derive", "cut"]


def _arrays(inputs):
    for value in inputs.values():
        if isinstance(value, list):
            for item in value:
                yield item[1]
        else:
            yield value


def _cut_array(a, remap):
    a = np.asarray(a)
    return a[tuple(slice(0, remap.get(d, d)) for d in a.shape)].copy()


def cut(inputs: dict, remap: dict, only=None) -> dict:
    """`inputs` (OpTest format) with every dim of size s cut to remap[s]; `only`: the slot
    to cut (then with `remap` applied to its dims only)."""
    out = {}
    for slot, value in inputs.items():
        if only is not None and slot != only:
            out[slot] = value
        elif isinstance(value, list):
            out[slot] = [(n, _cut_array(v, remap)) for n, v in value]
        else:
            out[slot] = _cut_array(value, remap)
    return out


def _edge_remap(inputs) -> dict:
    floats = [np.asarray(a) for a in _arrays(inputs)
              if isinstance(a, np.ndarray) and is_float(a.dtype) and a.ndim]
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
    if len(ranks) < 2:
        return None
    top = max(ranks.values())
    for slot, r in ranks.items():
        if 1 <= r < top and inputs[slot].shape[0] > 1:
            return slot
    return None


def derive(case, context=None):
    if case.reference is None:
        return []
    if any(isinstance(v, tuple) for v in case.inputs.values()) or any(
            isinstance(v, list) and any(isinstance(x[1], tuple) for x in v)
            for v in case.inputs.values()):
        return []   # LoD inputs: their lengths would have to be cut too
    out = []
    tries = []
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
