import numpy as np
import pytest

import opkit
from harness import OpTest


class TestArrayWriteOp(OpTest):
    """The harness compares LoDTensor outputs only, so the array itself is checked by the
    plain tests below; this case runs the op on every place and float dtype."""

    def setUp(self):
        self.op_type = "array_write"
        rng = np.random.default_rng(1901)
        self.inputs = {"X": rng.uniform(-1, 1, (10, 12)).astype("float64"),
                       "I": np.array([2], dtype="int64")}
        self.attrs = {}
        self.outputs = {"Out": self.inputs["X"]}

    def test_check_output(self):
        self.check_output(no_check_set=["Out"])


def _write(array, x, i, lod=None):
    scope = opkit.Scope()
    scope.var("arr").set_value(array)
    t = opkit.LoDTensor(x)
    if lod:
        t.set_recursive_sequence_lengths(lod)
    scope.var("x").set_value(t)
    scope.var("i").set_value(opkit.LoDTensor(np.array([i], dtype="int64")))
    op = opkit.create_op("array_write", {"X": "x", "I": "i"}, {"Out": "arr"})
    op.run(scope, opkit.CPUPlace())
    return scope.find_var("arr").value()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_array_write_grows_and_copies(dtype):
    x = (np.arange(12).reshape(4, 3) % 2).astype(dtype)
    array = _write(opkit.LoDTensorArray(), x, 2, lod=[[1, 3]])
    assert isinstance(array, opkit.LoDTensorArray) and len(array) == 3
    assert not array[0].is_initialized() and not array[1].is_initialized()
    np.testing.assert_array_equal(array[2].numpy(), x)
    assert array[2].numpy().dtype == np.dtype(dtype)
    assert array[2].recursive_sequence_lengths() == [[1, 3]]
    assert not np.shares_memory(array[2].numpy(), x)


def test_array_write_overwrites_in_place():
    first = _write(opkit.LoDTensorArray(), np.zeros((2, 2), "float32"), 0)
    again = _write(first, np.ones((2, 2), "float32"), 0)
    assert again is first and len(again) == 1
    np.testing.assert_array_equal(again[0].numpy(), np.ones((2, 2)))


def test_array_write_negative_index_is_refused():
    with pytest.raises(opkit.EnforceNotMet, match="should be >= 0"):
        _write(opkit.LoDTensorArray(), np.zeros((2, 2), "float32"), -1)
