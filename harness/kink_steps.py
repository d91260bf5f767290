"""Steps for the one-sided slopes of `kinks`, scaled to the point.

A fixed step (0.005) is far larger than a point like a log clamp's 1e-7: the "right slope"
of log(max(x, 1e-7)) over [1e-7, 1e-7 + 0.005] is 4,042 where the derivative is 1e7. The
step here is at most 5% of the distance from the point to the nearest other special value
(0 and every float attr value of the case), and the slopes are taken again with a step 4
times smaller: when the two disagree, the slope cannot be computed reliably there and the
element is not judged (the check says so) instead of failing.
"""
from __future__ import annotations

import numpy as np

from harness.kinks import one_sided

__all__ = ["scaled_step", "reliable_slopes"]

FRACTION = 0.05     # of the distance to the nearest other special value
AGREE = 1e-3        # relative agreement of the slopes at d and d / 4


def scaled_step(x0: float, delta: float, specials) -> float:
    """The step at `x0`: `delta`, or less near another special value."""
    gaps = [abs(x0 - v) for v in list(specials) + [0.0] if abs(x0 - v) > 0]
    if not gaps:
        return delta
    return min(delta, FRACTION * min(gaps))


def _specials(case) -> list[float]:
    out = []
    for v in (case.attrs or {}).values():
        if isinstance(v, (float, np.floating)) and np.isfinite(v):
            out.append(float(v))
    return out


def _close(a: float, b: float) -> bool:
    if not (np.isfinite(a) and np.isfinite(b)):
        return (np.isnan(a) and np.isnan(b)) or a == b
    return abs(a - b) <= AGREE * max(abs(a), abs(b), 1e-6)


def reliable_slopes(engine, name: str, k: int, case, delta: float):
    """(left, right) at element k of input `name`, or None when they cannot be computed
    reliably (the slopes move with the step)."""
    x0 = float(np.asarray(engine.base[name]).reshape(-1)[k])
    d = scaled_step(x0, delta, _specials(case))
    if d == delta and x0 == 0:
        return one_sided(engine, name, k)         # relu's 0: the usual step, as before
    first = one_sided(engine, name, k, d)
    second = one_sided(engine, name, k, d / 4)
    if all(_close(a, b) for a, b in zip(first, second)):
        return first
    if d == delta:
        return first        # the old step: judged as before (no new skip where it was used)
    return None
