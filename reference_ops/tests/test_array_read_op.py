import numpy as np
import pytest

import opkit
from harness import OpTest


def _array(*arrays):
    return opkit.LoDTensorArray(opkit.LoDTensor(a) for a in arrays)


class TestArrayReadOp(OpTest):
    def setUp(self):
        self.op_type = "array_read"
        rng = np.random.default_rng(2001)
        self.elements = [rng.uniform(-1, 1, (10, 12)).astype("float64") for _ in range(3)]
        self.inputs = {"Array": _array(*self.elements), "I": np.array([1], dtype="int64")}
        self.attrs = {}
        self.outputs = {"Out": self.elements[1]}

    def test_check_output(self):
        self.check_output()


class TestArrayReadInt64(TestArrayReadOp):
    def setUp(self):
        self.op_type = "array_read"
        self.elements = [np.arange(100, dtype="int64").reshape(10, 10) * k for k in range(2)]
        self.inputs = {"Array": _array(*self.elements), "I": np.array([1], dtype="int64")}
        self.attrs = {}
        self.outputs = {"Out": self.elements[1]}


def _read(array, i):
    scope = opkit.Scope()
    scope.var("arr").set_value(array)
    scope.var("i").set_value(opkit.LoDTensor(np.array([i], dtype="int64")))
    op = opkit.create_op("array_read", {"Array": "arr", "I": "i"}, {"Out": "out"})
    op.run(scope, opkit.CPUPlace())
    return scope.find_var("out").value()


def test_array_read_keeps_lod_and_copies():
    t = opkit.LoDTensor(np.arange(5, dtype="float32").reshape(5, 1))
    t.set_recursive_sequence_lengths([[2, 3]])
    out = _read(opkit.LoDTensorArray([t]), 0)
    assert out.recursive_sequence_lengths() == [[2, 3]]
    np.testing.assert_array_equal(out.numpy(), t.numpy())
    assert not np.shares_memory(out.numpy(), t.numpy())


def test_array_read_out_of_range():
    with pytest.raises(opkit.EnforceNotMet, match="out of range"):
        _read(_array(np.zeros(2, "float32")), 1)


def test_array_read_unwritten_element():
    with pytest.raises(opkit.EnforceNotMet, match="never written"):
        _read(opkit.LoDTensorArray([opkit.LoDTensor(), opkit.LoDTensor(np.zeros(2))]), 0)


def test_write_then_read_in_a_program():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[3], dtype="float32")
        i = opkit.layers.fill_constant([1], "int64", 0)
        arr = opkit.layers.array_write(x, i)
        opkit.layers.increment(i)
        arr = opkit.layers.array_write(opkit.layers.scale(x, 2.0), i, arr)
        back = opkit.layers.array_read(arr, i)
    xs = np.arange(6, dtype="float32").reshape(2, 3)
    value, items = opkit.Executor().run(main, feed={"x": xs}, fetch_list=[back, arr],
                                        scope=opkit.Scope())
    np.testing.assert_array_equal(value, 2 * xs)
    assert len(items) == 2
    np.testing.assert_array_equal(items[0], xs)
