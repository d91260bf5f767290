"""The one-sided derivative test, shared by `grad`, `fuzz` (through grad) and `kinks`.

At a point where L is not differentiable along one element (relu at 0, clip at its bounds,
a tie in max), the central difference is a mixture of the two one-sided slopes and no
analytic gradient equals it. `one_sided` gives the left and right slopes
((L(x) - L(x - d)) / d and (L(x + d) - L(x)) / d, Richardson-extrapolated from d and d/2)
through the numeric engine's public `loss`;
`kink_verdict` says whether an element is a kink and whether the analytic value is one of
the slopes. An analytic value that is neither slope is a failure, never excluded, with one
exception: at a local extremum (the slopes have opposite signs, abs at 0) an analytic 0 is
the conventional subgradient (numpy, Paddle and PyTorch take sign(0) = 0): "subgradient".
A relu-type kink (slopes 0 and 1) has no such convention: 0.5 there is "neither".
`domain_edge` tells an element where one side is not finite (sqrt, log, pow at 0): that is
the edge of the op's domain, not a kink, and the `kinks` check skips it.
"""
from __future__ import annotations

import numpy as np

from harness.tolerances import GRAD_ABS_FLOOR

__all__ = ["one_sided", "kink_verdict", "is_kink", "matches", "domain_edge", "is_subgradient",
           "ACCEPTED"]

# the verdicts under which the analytic value at a kink is right
ACCEPTED = ("left", "right", "subgradient")


def one_sided(engine, name: str, flat_index: int, delta: float | None = None):
    """(left, right) one-sided derivatives of the engine's loss along one element."""
    d = float(delta or engine.delta)
    x0 = engine.base[name]
    try:
        f0 = engine.loss(name, x0)
        u = np.zeros(x0.shape)
        u.reshape(-1)[flat_index] = 1.0
        f = {s: engine.loss(name, x0 + s * u) for s in (d, d / 2, -d / 2, -d)}
    finally:
        engine.restore(name)
    with np.errstate(all="ignore"):
        # Richardson: 2 R(d/2) - R(d) cancels the curvature term of a smooth side, so a
        # smooth point (x*x at 0) is no kink while relu's 0 still is
        right = 2 * (f[d / 2] - f0) / (d / 2) - (f[d] - f0) / d
        left = 2 * (f0 - f[-d / 2]) / (d / 2) - (f0 - f[-d]) / d
        return float(left), float(right)


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
    analytic 0 is the conventional subgradient. Slopes 0 and 1 (relu) are no extremum."""
    if domain_edge(left, right) or not left * right < 0:
        return False
    return abs(analytic) <= tol * min(abs(left), abs(right))


def kink_verdict(analytic: float, left: float, right: float, tol: float) -> str | None:
    """None when the element is no kink; "left"/"right" when the analytic value equals that
    slope; "subgradient" when it is 0 at a local extremum (is_subgradient); "neither" when it is a kink and the analytic value equals no slope."""
    if not is_kink(left, right, tol):
        return None
    if matches(analytic, left, tol):
        return "left"
    if matches(analytic, right, tol):
        return "right"
    if is_subgradient(analytic, left, right, tol):
        return "subgradient"
    return "neither"
