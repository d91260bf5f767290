"""`repeated_input`: one variable passed to two input slots (X and Y of a binary op) or twice
in a duplicable slot. `info["alias"]`: (slot, index, slot, index) - the second place is fed
the first place's variable; the check compares with distinct copies of the same values."""
from __future__ import annotations

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import Derived, Unsupported, normalize_slots
from opkit.framework.dtypes import is_float


def _key(s):
    return (s.data.shape, s.data.dtype.str, str(s.lengths))


def derive(case, context=None):
    proto = backends.proto(case.op_type)
    dup = {v.name for v in proto.inputs if v.duplicable} if proto is not None else set()
    specs = normalize_slots(case.inputs)
    out = []
    singles = [(slot, ss[0]) for slot, ss in specs.items()
               if slot not in dup and len(ss) == 1 and isinstance(ss[0].data, np.ndarray)
               and is_float(ss[0].data.dtype)]
    pair = next(((sa, sb) for i, (sa, a) in enumerate(singles) for sb, b in singles[i + 1:]
                 if _key(a) == _key(b)), None)
    if pair:
        out.append(Derived("repeated_input", case, case, f"{pair[0]}'s variable also fed to "
                           f"{pair[1]}", {"alias": (pair[0], 0, pair[1], 0)}))
    for slot, ss in specs.items():
        if slot not in dup:
            continue
        floats = [k for k, s in enumerate(ss) if isinstance(s.data, np.ndarray)
                  and is_float(s.data.dtype)]
        pair = next(((j, k) for j in floats for k in floats
                     if j < k and _key(ss[j]) == _key(ss[k])), None)
        if pair:
            out.append(Derived("repeated_input", case, case,
                               f"{slot}[{pair[0]}] passed twice in {slot}",
                               {"alias": (slot, pair[0], slot, pair[1])}))
            break
    if not out:
        return Unsupported("repeated_input", "no two float inputs of the same shape and dtype "
                                             "(in two slots or one duplicable slot)")
    return out
