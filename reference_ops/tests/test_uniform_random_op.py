import numpy as np
import pytest

import opkit


def _run(op_type, attrs, dtype="float32"):
    program = opkit.Program()
    block = program.global_block()
    out = block.create_var(name="out", dtype=dtype)
    block.append_op(op_type, outputs={"Out": out}, attrs=dict(attrs, dtype=dtype))
    (value,) = opkit.Executor(opkit.CPUPlace()).run(program, fetch_list=[out])
    return value


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_random_statistics(dtype):
    lo, hi = -3.0, 5.0
    v = _run("uniform_random", {"shape": [1000, 200], "min": lo, "max": hi, "seed": 10}, dtype)
    assert v.shape == (1000, 200) and v.dtype == np.dtype(dtype)
    assert v.min() >= lo and v.max() < hi
    assert abs(v.mean() - (lo + hi) / 2) < 0.05
    assert abs(v.var() - (hi - lo) ** 2 / 12) < 0.1
    hist, _ = np.histogram(v, bins=10, range=(lo, hi))
    assert np.all(np.abs(hist / v.size - 0.1) < 0.005)


def test_uniform_random_seed_reproducible():
    a = _run("uniform_random", {"shape": [50, 20], "seed": 123})
    b = _run("uniform_random", {"shape": [50, 20], "seed": 123})
    c = _run("uniform_random", {"shape": [50, 20], "seed": 124})
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_uniform_random_seed_zero_is_random():
    a = _run("uniform_random", {"shape": [50, 20], "seed": 0})
    b = _run("uniform_random", {"shape": [50, 20], "seed": 0})
    assert not np.array_equal(a, b)


def test_uniform_random_rejects_min_ge_max():
    with pytest.raises(opkit.EnforceNotMet, match="min"):
        _run("uniform_random", {"shape": [10], "min": 1.0, "max": 1.0})


from harness import OpTest  # noqa: E402
from harness.judging.distributions import Uniform  # noqa: E402


class TestUniformRandomOpHarness(OpTest):
    """Runs the op through every harness check (dtypes, determinism with a fixed seed, ...);
    its values are random, so `output` compares nothing (`no_check_set`): the statistics
    tests above check the distribution."""

    def setUp(self):
        self.op_type = "uniform_random"
        self.inputs = {}
        self.attrs = {"shape": [20, 10], "min": -2.0, "max": 3.0, "seed": 7, "dtype": "float64"}
        self.outputs = {"Out": np.zeros((20, 10))}
        # the `distribution` check: Out ~ U(min, max), min and max varied
        self.distribution = {"Out": Uniform(min="min", max="max")}

    def test_check_output(self):
        self.check_output(no_check_set=["Out"])
