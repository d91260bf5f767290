"""`empty`: a raw exception on a zero-size input is a crash only when the contract says the
emptied input is a batch.

The harness infers the batch: every input sharing the first float input's leading size. A
float input that an integer input of another length may index (a table whose ids are
hashed, or any ids not all in its rows) is not always recognised as a table; emptying it
leaves the ids pointing nowhere, and the op's IndexError is then no bug. When the raw
exception is an IndexError while such an integer input was left as it is, the result is
`unconfirmed`,
settled by declaring the table a parameter (`.as_parameter()`: never emptied) -- or, if the
emptied input really is a batch, by declaring the ids' domain (docs/domains.md), which ties
them to it.
"""
from __future__ import annotations

import numpy as np

from harness.case import normalize_slots
from harness.confirm import unconfirm
from harness.report import FAIL
from opkit.registry import op_info

__all__ = ["confirm_raw"]


def _untouched_ints(derived) -> list[str]:
    zeroed = set(derived.info.get("zeroed") or ())
    out = []
    for slot, items in normalize_slots(derived.case.inputs).items():
        for s in items:
            d = s.data
            if isinstance(d, np.ndarray) and d.dtype.kind in "iu" and d.size and \
                    s.name not in zeroed:
                out.append(slot)
    return out


def _declared(case, slot) -> bool:
    proto = op_info(case.op_type).proto
    vp = proto.input(slot) if proto is not None else None
    return vp is not None and getattr(vp, "domain", None) is not None


def confirm_raw(derived, results):
    ints = [s for s in _untouched_ints(derived) if not _declared(derived.case, s)]
    if not ints:
        return results

    zeroed = set(derived.info.get("zeroed") or ())
    slots = [slot for slot, items in normalize_slots(derived.case.inputs).items()
             if any(s.name in zeroed for s in items)]
    table = slots[0] if slots else "W"
    out = []
    for r in results:
        if r.status == FAIL and r.kind == "raw-exception" and "IndexError" in r.message:
            r = unconfirm(r, f"the harness inferred that {', '.join(slots)} is a batch; the "
                             f"integer input {', '.join(ints)} (another length, no declared "
                             f"domain) may index it, and then a zero-size "
                             f"{table} leaves it pointing nowhere",
                          f'declare the table a parameter: self.add_input("{table}", ...)'
                          f".as_parameter() in the OpMaker (docs/domains.md): it is then "
                          f"never emptied")
        out.append(r)
    return out
