"""pow's integer kernels (Paddle 3.x): X ** int(factor) in X's dtype, the factor truncated
toward zero; a negative exponent is rejected with its value."""
import numpy as np
import pytest

import opkit
from harness import OpTest


def _pow(x, factor):
    scope = opkit.Scope()
    scope.var("x").get_tensor().set(x, opkit.CPUPlace())
    scope.var("out")
    opkit.create_op("pow", {"X": "x"}, {"Out": "out"}, {"factor": factor}).run(
        scope, opkit.CPUPlace())
    return scope.find_var("out").get_tensor().numpy()


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_int_pow_keeps_dtype_and_truncates_factor(dtype):
    x = np.array([1, 3, -6, 0], dtype=dtype)
    out = _pow(x, 2.9)
    assert out.dtype == np.dtype(dtype)
    assert out.tolist() == [1, 9, 36, 0]
    assert _pow(x, 3.0).tolist() == [1, 27, -216, 0]


def test_int64_pow_is_exact_beyond_float_precision():
    x = np.array([3], dtype="int64")
    assert _pow(x, 39.0).tolist() == [3 ** 39]      # > 2**53: a float kernel would round


def test_negative_exponent_on_int_is_rejected():
    with pytest.raises(opkit.EnforceNotMet, match="negative integer exponent -2"):
        _pow(np.array([2], dtype="int64"), -2.0)


class TestPowInt64OpTest(OpTest):
    def setUp(self):
        self.op_type = "pow"
        self.inputs = {"X": np.array([1, 3, 6], dtype="int64")}
        self.attrs = {"factor": 2.0}
        self.outputs = {"Out": np.array([1, 9, 36], dtype="int64")}

    def test_check_output(self):
        self.check_output()
