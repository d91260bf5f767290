"""`kinks`: the case with a few elements of each float input it differentiates put exactly
on likely kinks: 0 (relu, abs), each float attr value (clip's min and max, a threshold), and
a tie (element 2 = element 1: max, max-pool, top-k). A point whose value another float
input holds at the aligned element (the same flat index of an input of the same shape, an
element it meets under numpy broadcasting, or element 0 of both, which every broadcast
aligns) is a tie between the
two inputs (X = Y = 0 in elementwise_max, x - y = 0 in dist) and labelled one, so `kinks`
accepts the even split there when the op is smooth along moving both together.
`info["points"]`: {input: [(flat index, what)]}; `info["cross_ties"]`: [(input, flat index,
other input, its flat index)]."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.backend.case import Derived, Unsupported, as_value, map_inputs, normalize_slots
from harness.backend.seam import proto_of
from harness.reporting.values import fmt_value
from opkit.framework.domains import input_allows
from opkit.framework.dtypes import is_float


def derive(case, context=None):
    wrt = list(case.grad_inputs or [])
    if not wrt:
        return Unsupported("kinks", "the case checks no gradient (no check_grad call "
                                    "recorded)")
    points = {}

    def one(s):
        d = s.data
        if s.name in wrt and isinstance(d, np.ndarray) and is_float(d.dtype) and d.size:
            d = d.copy()
            flat = d.reshape(-1)
            picks = [(0.0, "0")] + [(v, f"attr {k}={fmt_value(v)}") for k, v in
                                    (case.attrs or {}).items()
                                    if isinstance(v, float) and np.isfinite(v)]
            pts = []
            for i, (v, what) in enumerate(picks):
                k = (i * 7) % flat.size
                flat[k] = v
                pts.append((k, what))
            if flat.size >= 3:
                flat[2] = flat[1]
                pts.append((2, f"tie with element 1 ({float(flat[1])!r})"))
            if not input_allows(proto_of(case.op_type), case.inputs, case.attrs, s.name, d):
                return as_value(s)   # outside the input's declared domain: not derived
            points[s.name] = pts
        return as_value(s, d)

    inputs = map_inputs(case.inputs, one)
    if not points:
        return Unsupported("kinks", "no non-empty float input is differentiated")
    cross = _label_cross_ties(points, inputs)
    derived = replace(case, inputs=inputs, outputs={}, name=case.name + "[kinks]",
                      grad_inputs=list(case.grad_inputs))
    return Derived("kinks", derived, case, "inputs on kinks (0, float attr values, a tie)",
                   {"points": points, "cross_ties": cross})


def _label_cross_ties(points: dict, inputs: dict) -> list:
    """Relabel, in place, each point whose value another float input holds at the aligned
    element as a tie with that input (its label then starts with "tie"); the ties found."""
    cross = []
    arrays = {s.name: s.data for specs in normalize_slots(inputs).values() for s in specs
              if isinstance(s.data, np.ndarray) and is_float(s.data.dtype) and s.data.size}
    for name, pts in points.items():
        mine = arrays[name]
        for j, (k, what) in enumerate(pts):
            if str(what).startswith("tie"):
                continue
            v = mine.reshape(-1)[k]
            for other, theirs in arrays.items():
                at = _aligned_equal(mine, k, theirs, v) if other != name else None
                if at is not None:
                    pts[j] = (k, f"tie with input {other}[{at}] (both {what})")
                    cross.append((name, k, other, at))
                    break
    return cross


def _aligned_equal(mine, k: int, theirs, v):
    """The flat index of an element of `theirs` equal to `v` that element k of `mine` meets:
    the same index (same shape), an element it meets under numpy broadcasting, or element 0
    of both (every broadcast aligns them); None when there is none."""
    if theirs.shape == mine.shape:
        return k if theirs.reshape(-1)[k] == v else None
    try:
        shape = np.broadcast_shapes(mine.shape, theirs.shape)
    except ValueError:
        return 0 if k == 0 and theirs.reshape(-1)[0] == v else None
    src_mine = np.broadcast_to(np.arange(mine.size).reshape(mine.shape), shape)
    src_theirs = np.broadcast_to(np.arange(theirs.size).reshape(theirs.shape), shape)
    met = src_theirs[src_mine == k]
    hits = met[theirs.reshape(-1)[met] == v]
    return int(hits[0]) if hits.size else None
