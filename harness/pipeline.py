"""The shared run-and-compare steps of the variant checks.

`run_case(case, combo, context, transform=None)`: a PreparedOp of the case on the combo's place
and dtype (harness.checks.support.prepare), float inputs optionally transformed after the
cast (`transform(name, array) -> array`, e.g. a non-contiguous view), forward and (when the
case names gradients and the op has a grad maker) backward: {name: array, 'X@GRAD': array}.

`compare_runs(want, got, dtype, what)`: the one comparator (harness.compare) over every
output and gradient of two runs; a message naming the first wrong element, or None.
"""
from __future__ import annotations

import numpy as np

from harness.compare import compare
from harness.engine import prepare, raised, refusal, run_forward_backward
from harness.options import DEFAULT_SEED

__all__ = ["run_case", "compare_runs", "opkit_refusal", "raised"]


def run_case(case, combo, context, transform=None, backward: bool = True) -> dict:
    """(The plain run of a case on a combo is cached in `context.cache`: several variant
    checks compare against it.)"""
    cache = getattr(context, "cache", None)
    key = ("run", id(case), combo.place, combo.dtype, backward)
    if transform is None and cache is not None and key in cache:
        got = cache[key]
        if isinstance(got, BaseException):
            raise got
        return got
    try:
        got = _run_case(case, combo, context, transform, backward)
    except Exception as exc:
        if transform is None and cache is not None:
            cache[key] = exc
        raise
    if transform is None and cache is not None:
        cache[key] = got
    return got


def _run_case(case, combo, context, transform, backward) -> dict:
    prepared = prepare(case, combo)
    if transform is not None:
        for specs in prepared.inputs.values():
            for s in specs:
                if isinstance(s.data, np.ndarray):
                    new = transform(s.name, s.data)
                    if new is not s.data:
                        prepared.set_input(s.name, new, s.lod)
    seed = getattr(context, "seed", DEFAULT_SEED)
    return run_forward_backward(prepared, case, backward=backward, seed=seed)


def compare_runs(want: dict, got: dict, dtype: str, what: str) -> str | None:
    for name, w in want.items():
        g = got.get(name)
        if w is None and g is None:
            continue
        if w is None or g is None:
            return f"{name}: produced in one run only ({what}: {w is not None})"
        w, g = np.asarray(w), np.asarray(g)
        if w.dtype.kind not in "fc":
            if w.shape != g.shape or not np.array_equal(w, g):
                return f"{name}: differs from the {what} (compared exactly)"
            continue
        msg, _ = compare(name, g, w, dtype or w.dtype.name, None, None, True)
        if msg:
            return msg.replace("expected", f"{what} gave")
    return None


# the one refusal decision and the one error line: harness.engine
opkit_refusal = refusal
