"""The kinks check at a tie (triage of Paddle's reduce_max): a gradient split evenly between
the two tied elements (Paddle's and PyTorch's amax convention, the midpoint of the one-sided
slopes) is a valid subgradient and passes; any other value between them still fails.
Runs without Paddle."""
from __future__ import annotations

import numpy as np

from harness.checks.gradients.kinks import _compare
from harness.backend.context import Combo


class _Engine:
    def __init__(self, shape):
        self.base = {"X": np.zeros(shape)}


def verdict(analytic: float, what: str = "tie with element 1 (1.38)"):
    got = {"X@GRAD": np.array([analytic, 0.0, 0.0])}
    slopes = {("X", 0): (what, 0.0, 1.1758)}
    return _compare(_Engine((3,)), slopes, got, Combo("CPU", "float64"), 0.005)


def test_even_split_at_a_tie_passes():
    assert verdict(0.5879) is None


def test_another_value_between_the_slopes_still_fails():
    problem = verdict(0.3)
    assert problem is not None and "neither one-sided slope" in problem[0]


def test_the_midpoint_is_accepted_only_at_a_tie():
    assert verdict(0.5879, what="attr threshold=0.3") is not None
