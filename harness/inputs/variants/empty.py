"""`empty`: zero-size variants of the case: the leading (batch) dimension of every input that
shares the batch size of the first float input becomes 0; a LoD input becomes an all-empty
batch (the same number of sequences, each of length 0). Then each other dim size of the first
float input is cut to 0 in turn, in every input (not parameters or tables) wherever that size
appears (as fuzz remaps dims: equal dims stay equal)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.backend.case import Derived, Unsupported, as_value, map_inputs, normalize_slots
from harness.inputs.variants.shapes import cut
from harness.backend.seam import proto_of
from opkit.framework.dtypes import is_float


def _parameters(case) -> set:
    """The input slots the op declares as parameters (`VarProto.as_parameter()`: weights,
    an embedding table): none of their dims is a batch dim, so they are never emptied."""
    proto = proto_of(case.op_type)
    return {v.name for v in getattr(proto, "inputs", []) or [] if getattr(v, "parameter", False)}


def _tables(case, params) -> set:
    """Float inputs that an integer input indexes (an embedding table W and its ids, whose
    values all lie in [0, W's rows) while the ids' own first dim differs): a table is no
    batch, and emptying it would leave the ids out of range."""
    specs = normalize_slots(case.inputs)
    ints = [s for slot, ss in specs.items() if slot not in params for s in ss
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind in "iu" and s.data.size]
    out = set()
    for slot, ss in specs.items():
        for s in ss:
            d = s.data
            if slot in params or not isinstance(d, np.ndarray) or not is_float(d.dtype) or \
                    not d.ndim or d.shape[0] < 2:
                continue
            rows = d.shape[0]
            if any(i.data.shape[:1] != (rows,) and i.data.min() >= 0 and i.data.max() < rows
                   and i.data.max() >= 1 for i in ints):
                out.add(slot)
    return out


def derive(case, context=None):
    params = _parameters(case)
    params |= _tables(case, params)
    specs = {slot: ss for slot, ss in normalize_slots(case.inputs).items() if slot not in params}
    floats = [s for ss in specs.values() for s in ss
              if isinstance(s.data, np.ndarray) and is_float(s.data.dtype) and s.data.ndim]
    if not floats:
        # a float parameter (an embedding table) and an integer batch input (the ids):
        # the batch is the integer input's
        floats = [s for ss in specs.values() for s in ss
                  if isinstance(s.data, np.ndarray) and s.data.ndim and params]
    if not floats:
        return Unsupported("empty", "the case has no float input with a batch dimension")
    lod = [s for s in floats if s.lengths]
    batch = floats[0].data.shape[0]
    if batch == 0:
        return Unsupported("empty", "the case is already empty")

    def zeroes(s):
        d = s.data
        return isinstance(d, np.ndarray) and d.ndim and d.shape[0] == batch and \
            (not lod or s.lengths or is_float(d.dtype))

    if any(zeroes(s) and s.lengths and len(s.lengths) > 1 for ss in specs.values() for s in ss):
        return Unsupported("empty", "multi-level LoD inputs are not emptied")
    zeroed = []
    param_names = {s.name for slot, ss in normalize_slots(case.inputs).items() if slot in params
                   for s in ss}

    def one(s):
        if s.name in param_names or not zeroes(s):
            return as_value(s)
        zeroed.append(s.name)
        zero = np.zeros((0,) + s.data.shape[1:], dtype=s.data.dtype)
        return (zero, [[0] * len(s.lengths[-1])]) if s.lengths else zero

    inputs = map_inputs(case.inputs, one)
    # the expected values go; a duplicable output's names stay (how many outputs split
    # makes is the case's: without them the op is not built at all)
    outputs = {slot: [(item[0], None) for item in value]
               for slot, value in (case.outputs or {}).items() if isinstance(value, list)}
    derived = replace(case, inputs=inputs, outputs=outputs, reference=None,
                      name=case.name + "[empty]")
    out = [Derived("empty", derived, case, f"zero-size batch in {', '.join(zeroed)}",
                   {"batch": batch, "zeroed": zeroed})]
    if lod or any(not isinstance(v, (list, np.ndarray)) or isinstance(v, list) and any(
            not isinstance(i[1], np.ndarray) for i in v) for v in case.inputs.values()):
        return out    # LoD (a tuple) or a non-array input: only the batch is emptied
    for d in dict.fromkeys(floats[0].data.shape[1:]):
        if d in (0, batch):
            continue
        kept = {slot: v for slot, v in case.inputs.items() if slot in params}
        cut_inputs = {**cut({k: v for k, v in case.inputs.items() if k not in kept}, {d: 0}),
                      **kept}
        out.append(Derived("empty", replace(derived, inputs=cut_inputs,
                                            name=f"{case.name}[empty dim {d}]"), case,
                           f"every dim of size {d} cut to 0", {"batch": None, "zeroed": []}))
    return out
