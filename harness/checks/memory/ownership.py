"""`ownership`: what a run hands out is the caller's to keep (docs/harness.md, "`ownership`")."""
from __future__ import annotations

import numpy as np

from harness.backend.case import other_inputs
from harness.checks.base import Check
from harness.judging.compare import first_flagged, fmt_index
from harness.backend.context import prepare, run_forward_backward
from harness.reporting.values import fmt_value
from opkit.framework.device import to_host


def _buffers(prepared, names) -> dict:
    return {n: getattr(prepared.value(n), "buffer", None) for n in names}


def _same_memory(a, b) -> bool:
    if a is None or b is None:
        return False
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.size > 0 and np.shares_memory(a, b)
    try:
        return a.data.ptr == b.data.ptr and a.size > 0
    except AttributeError:
        return False


class OwnershipCheck(Check):
    name = "ownership"
    description = ("outputs of one run stay unchanged when another instance of the op runs; "
                   "two instances share no output buffer")
    order = 170

    def verdict(self, derived, context):
        case, seed = derived.case, context.seed
        return self.compare_each(
            derived, context,
            base=lambda combo: _first(case, combo, seed),
            variant=lambda combo: _second(case, combo, seed),
            compare=_compare, base_fails="fail",
            raised_prefix="the op raised before the check could finish: ")


def _first(case, combo, seed):
    """The first run, forward and backward: (its results, the buffers it handed out (not
    copied), the input buffers)."""
    p1 = prepare(case, combo)
    first = run_forward_backward(p1, case, seed=seed)
    names = [s.name for specs in p1.inputs.values() for s in specs]
    in1 = [b for b in _buffers(p1, names).values() if b is not None]
    return first, _buffers(p1, first), in1


def _second(case, combo, seed):
    """A second instance of the op, its own scope, run on other inputs of the same shapes
    (the case's own when the op does not take those): its prepared op."""
    p2 = prepare(case, combo)
    for specs in p2.inputs.values():
        for s in specs:
            new = other_inputs(s.name, s.data)
            if new is not s.data:
                p2.set_input(s.name, new, s.lod)
    try:
        run_forward_backward(p2, case, seed=seed)
    except Exception:  # noqa: BLE001 - the other values may be outside the domain
        p2 = prepare(case, combo)
        run_forward_backward(p2, case, seed=seed)
    return p2


def _compare(first_run, p2, combo):
    """None, or what the second instance did to the first run's buffers (kind Mismatch)."""
    first, held, in1 = first_run
    second = _buffers(p2, first)
    for key, before in first.items():
        buf = held[key]
        if before is None or buf is None:
            continue
        now = np.asarray(to_host(buf))
        floats, same_shape = before.dtype.kind == "f", now.shape == before.shape
        if not same_shape or not np.array_equal(now, before, equal_nan=floats):
            changed = np.ones(before.shape, bool)       # another shape: the first element
            if same_shape:
                changed = now != before
                if floats:
                    changed &= ~(np.isnan(now) & np.isnan(before))
            k, idx = first_flagged(changed)
            was = before.reshape(-1)[k].item()
            is_ = now.reshape(-1)[k].item() if same_shape else now.shape
            return (f"{fmt_index(key, idx)} of the first run was {fmt_value(was)} and is "
                    f"{fmt_value(is_)} after a second instance of the op ran (its own "
                    "scope, other inputs of the same shapes): the kernel reuses "
                    "an output buffer across runs (e.g. a module-level cache "
                    "keyed by shape)")
        # the same buffer in both instances, unless it is a view of an input (`aliasing`)
        if _same_memory(buf, second[key]) and not any(_same_memory(buf, b) for b in in1):
            return (f"{key}: two instances of the op (two scopes) hand out the "
                    "same output buffer: the second run overwrites what the first "
                    "caller holds")
    return None


CHECK = OwnershipCheck()
