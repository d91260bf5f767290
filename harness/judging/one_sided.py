"""The one-sided derivative test, shared by `grad`, `fuzz` (through grad), `kinks`, `lod` and
`double_grad` (docs/harness.md, the `kinks` rows; docs/gradients.md, "Kinks closer than the
step"): `kink_verdict` judges an analytic value at an element whose one-sided slopes
disagree (a kink), `unexplained` gives the wrong elements no kink explains, and
`reliable_slopes` the slopes with a step scaled to the point.
"""
from __future__ import annotations

import numpy as np

from harness.judging.tolerances import GRAD_ABS_FLOOR

__all__ = ["one_sided", "kink_verdict", "is_kink", "matches", "domain_edge", "is_subgradient",
           "ACCEPTED", "reliable_slopes", "unexplained", "KINK_MATCH_TOL", "discontinuous"]

# the verdicts under which the analytic value at a kink is right
ACCEPTED = ("left", "right", "subgradient")
KINK_MATCH_TOL = 1e-4  # float64: an analytic value within this of a one-sided slope matches it


def _losses_along(engine, name: str, flat_index: int, steps) -> tuple:
    """(loss at the base point, {step: loss with element `flat_index` of `name` moved by
    step}); the engine's input is put back afterwards."""
    x0 = engine.base[name]
    try:
        f0 = engine.loss(name, x0)
        u = np.zeros(x0.shape)
        u.reshape(-1)[flat_index] = 1.0
        return f0, {s: engine.loss(name, x0 + s * u) for s in steps}
    finally:
        engine.restore(name)


def one_sided(engine, name: str, flat_index: int, delta: float | None = None):
    """(left, right) one-sided derivatives of the engine's loss along one element."""
    d = float(delta or engine.delta)
    f0, f = _losses_along(engine, name, flat_index, (d, d / 2, -d / 2, -d))
    with np.errstate(all="ignore"):
        # Richardson: 2 R(d/2) - R(d) cancels the curvature term of a smooth side, so a
        # smooth point (x*x at 0) is no kink while relu's 0 still is
        right = 2 * (f[d / 2] - f0) / (d / 2) - (f[d] - f0) / d
        left = 2 * (f0 - f[-d / 2]) / (d / 2) - (f0 - f[-d]) / d
        return float(left), float(right)


# reliable_slopes: a fixed step (0.005) is far larger than a point like a log clamp's 1e-7
FRACTION = 0.05     # of the distance to the nearest other special value
AGREE = 1e-3        # relative agreement of the slopes at d and d / 4


def _close(a: float, b: float) -> bool:
    if not (np.isfinite(a) and np.isfinite(b)):
        return (np.isnan(a) and np.isnan(b)) or a == b
    return abs(a - b) <= AGREE * max(abs(a), abs(b), 1e-6)


def reliable_slopes(engine, name: str, k: int, case, delta: float):
    """(left, right) at element k of input `name`, or None when they cannot be computed
    reliably (the slopes move with the step)."""
    x0 = float(np.asarray(engine.base[name]).reshape(-1)[k])
    specials = [float(v) for v in (case.attrs or {}).values()
                if isinstance(v, (float, np.floating)) and np.isfinite(v)]
    gaps = [abs(x0 - v) for v in specials + [0.0] if abs(x0 - v) > 0]
    d = min(delta, FRACTION * min(gaps)) if gaps else delta   # less near another special
    if d == delta and x0 == 0:
        return one_sided(engine, name, k)         # relu's 0: the usual step
    first = one_sided(engine, name, k, d)
    second = one_sided(engine, name, k, d / 4)
    if all(_close(a, b) for a, b in zip(first, second)) or d == delta:
        return first        # at the usual step: judged, never skipped
    return None


JUMP_RATIO = 0.6    # |f(x + d/4) - f(x)| / |f(x + d) - f(x)|: 1/4 where f is continuous
                    # with a slope, 1 across a jump


def discontinuous(engine, name: str, flat_index: int, delta: float | None = None) -> bool:
    """Whether the engine's loss jumps at element `flat_index` of input `name` (on either
    side, the change does not shrink with the step): the op is not continuous there (atan2
    at (0, 0), sign at 0), so it has no one-sided derivatives either. Such a point is
    singular, not a kink: its finite differences grow like 1/step and judge nothing."""
    d = float(delta or engine.delta)
    f0, f = _losses_along(engine, name, flat_index, (d, d / 4, -d / 4, -d))
    floor = 1e-8 * max(1.0, abs(f0))
    with np.errstate(all="ignore"):
        for side in (1, -1):
            far, near = f[side * d] - f0, f[side * d / 4] - f0
            if not (np.isfinite(far) and np.isfinite(near)):
                continue                # a domain edge: domain_edge's business
            if abs(far) > floor and abs(near) > JUMP_RATIO * abs(far):
                return True
    return False


def _rel(a, b) -> float:
    return abs(a - b) / max(abs(b), GRAD_ABS_FLOOR)


def matches(analytic: float, slope: float, tol: float) -> bool:
    return bool(np.isfinite(slope)) and _rel(analytic, slope) <= tol


def is_kink(left: float, right: float, tol: float) -> bool:
    if not (np.isfinite(left) and np.isfinite(right)):
        return np.isfinite(left) or np.isfinite(right)    # a domain edge on one side
    return _rel(left, right) > tol and _rel(right, left) > tol


def domain_edge(left: float, right: float) -> bool:
    """One one-sided slope is nan or infinite: the element sits on the edge of the op's
    domain (sqrt, log, pow at 0), not on a kink."""
    return not (np.isfinite(left) and np.isfinite(right))


def is_subgradient(analytic: float, left: float, right: float, tol: float) -> bool:
    """At a local extremum kink (finite one-sided slopes of opposite signs, abs at 0) an
    analytic 0 is the conventional subgradient (numpy, Paddle and PyTorch take sign(0) = 0).
    Slopes 0 and 1 (relu) are no extremum: 0.5 there is "neither"."""
    if domain_edge(left, right) or not left * right < 0:
        return False
    return abs(analytic) <= tol * min(abs(left), abs(right))


def kink_verdict(analytic: float, left: float, right: float, tol: float) -> str | None:
    """None when the element is no kink; "left"/"right" when the analytic value equals that
    slope; "subgradient" when it is 0 at a local extremum (is_subgradient); "neither" when
    it is a kink and the analytic value equals no slope."""
    if not is_kink(left, right, tol):
        return None
    if matches(analytic, left, tol):
        return "left"
    if matches(analytic, right, tol):
        return "right"
    if is_subgradient(analytic, left, right, tol):
        return "subgradient"
    return "neither"


def unexplained(engine, name, ana, mask, tol, local=False, first_only=False) -> list[int]:
    """The flat indices of the wrong elements (`mask`) that no kink explains: the analytic
    value is no one-sided slope (nor the subgradient) of a kink (kink_verdict), or there is
    no kink. `local`: such an element passes when local_slope_matches; `first_only`: stop at
    the first one left."""
    left = []
    for k in np.flatnonzero(mask.reshape(-1)):
        lo, hi = one_sided(engine, name, int(k))
        a = float(ana.reshape(-1)[k])
        if kink_verdict(a, lo, hi, tol) not in ACCEPTED and \
                not (local and local_slope_matches(engine, name, int(k), a, tol)):
            left.append(int(k))
            if first_only:
                break
    return left


def local_slope_matches(engine, name, k, analytic, tol) -> bool:
    """Steps scaled down toward the point (1e-2, 1e-4, 1e-6 of the engine's delta): a kink
    closer to the point than the step (clip's bounds at +-1e-7 around an input at 0) mixes
    slopes that are not the point's. True when, at a smaller step, the element is a kink whose
    one-sided slope (or subgradient) the analytic value is, or no kink and the analytic value
    is the local slope on both sides."""
    for scale in (1e-2, 1e-4, 1e-6):
        with np.errstate(all="ignore"):
            left, right = one_sided(engine, name, k, engine.delta * scale)
        if not (np.isfinite(left) and np.isfinite(right)):
            return False
        verdict = kink_verdict(analytic, left, right, tol)      # None: no kink
        if verdict in ACCEPTED or (verdict is None and matches(analytic, left, tol) and
                                   matches(analytic, right, tol)):
            return True
    return False
