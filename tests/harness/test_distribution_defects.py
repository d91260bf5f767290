"""The `distribution` check's laws: a continuous law's support check fires also where one
bound is infinite (Exponential), and sampling leaves the OpTest's declared Law objects as
the test wrote them (the dtype's tolerance goes on a copy)."""
from __future__ import annotations

import numpy as np


def test_exponential_support_check_fires_on_negative_samples():
    from harness.judging.distributions import Exponential

    x = np.random.default_rng(0).exponential(1.0, 2000)
    x[:5] = -0.25
    msg = Exponential(rate=1.0).test(x, {"rate": 1.0}, 0.01)
    assert msg and "5 of 2000 samples lie outside [0, inf]" in msg and "-0.25" in msg, msg
    # a bound's slack is relative to the finite bounds: 1e-6 below 0 is inside
    near = Exponential(rate=1.0).test(np.abs(x) - 1e-7, {"rate": 1.0}, 0.01)
    assert near is None or "outside" not in near, near


def test_sampling_does_not_write_onto_the_declared_law():
    import reference_ops  # noqa: F401 - uniform_random
    from harness.backend.case import Case
    from harness.checks.values.distribution import _sample
    from harness.judging.distributions import Uniform

    attrs = {"shape": [20, 10], "min": -2.0, "max": 3.0, "seed": 7, "dtype": "float64"}
    case = Case("TestUniform", "uniform_random", {}, attrs, {"Out": np.zeros((20, 10))})
    law = Uniform(min="min", max="max")
    before = dict(vars(law))
    samples, _, rtol = _sample(case, attrs, {"Out": law}, set(attrs), 2024)
    assert samples["Out"].size >= 200
    assert rtol >= 1e-6
    assert vars(law) == before, vars(law)
