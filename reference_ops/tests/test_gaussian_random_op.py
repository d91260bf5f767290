import numpy as np
import pytest

import opkit


def _run(attrs, dtype="float32"):
    program = opkit.Program()
    block = program.global_block()
    out = block.create_var(name="out", dtype=dtype)
    block.append_op("gaussian_random", outputs={"Out": out}, attrs=dict(attrs, dtype=dtype))
    (value,) = opkit.Executor(opkit.CPUPlace()).run(program, fetch_list=[out])
    return value


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gaussian_random_statistics(dtype):
    v = _run({"shape": [1000, 200], "mean": 1.5, "std": 2.0, "seed": 10}, dtype)
    assert v.shape == (1000, 200) and v.dtype == np.dtype(dtype)
    assert abs(v.mean() - 1.5) < 0.02
    assert abs(v.std() - 2.0) < 0.02
    # about 68.3% within one standard deviation
    assert abs(np.mean(np.abs(v - 1.5) < 2.0) - 0.6827) < 0.01


def test_gaussian_random_seed_reproducible():
    a = _run({"shape": [50, 20], "seed": 7})
    b = _run({"shape": [50, 20], "seed": 7})
    c = _run({"shape": [50, 20], "seed": 8})
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_gaussian_random_seed_zero_is_random():
    assert not np.array_equal(_run({"shape": [100], "seed": 0}), _run({"shape": [100], "seed": 0}))


from harness import OpTest  # noqa: E402
from harness.judging.distributions import Normal  # noqa: E402


class TestGaussianRandomOpHarness(OpTest):
    """Every harness check on the op (its values are random: `output` compares nothing; the
    statistics tests above check the distribution)."""

    def setUp(self):
        self.op_type = "gaussian_random"
        self.inputs = {}
        self.attrs = {"shape": [20, 10], "mean": 1.0, "std": 2.0, "seed": 7, "dtype": "float64"}
        self.outputs = {"Out": np.zeros((20, 10))}
        # the `distribution` check: Out ~ N(mean, std^2), mean and std varied
        self.distribution = {"Out": Normal(mean="mean", std="std")}

    def test_check_output(self):
        self.check_output(no_check_set=["Out"])
