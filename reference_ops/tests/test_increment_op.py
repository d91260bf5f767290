import numpy as np
import pytest

import opkit
from harness import OpTest


class TestIncrementOp(OpTest):
    def setUp(self):
        self.op_type = "increment"
        rng = np.random.default_rng(1701)
        self.inputs = {"X": rng.uniform(-1, 1, (10, 12)).astype("float64")}
        self.attrs = {"step": 2.5}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] + attrs.get("step", 1.0)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestIncrementDefaultStep(TestIncrementOp):
    def setUp(self):
        super().setUp()
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)


class TestIncrementInt64Counter(OpTest):
    """A one-element int64 loop counter (no float input: check_output only)."""

    def setUp(self):
        self.op_type = "increment"
        self.inputs = {"X": np.array([41], dtype="int64")}
        self.attrs = {"step": 1.0}
        self.outputs = {"Out": np.array([42], dtype="int64")}

    def test_check_output(self):
        self.check_output()


class TestIncrementInt32NegativeStep(TestIncrementInt64Counter):
    def setUp(self):
        self.op_type = "increment"
        self.inputs = {"X": np.arange(120, dtype="int32").reshape(10, 12)}
        self.attrs = {"step": -3.0}
        self.outputs = {"Out": np.arange(120, dtype="int32").reshape(10, 12) - 3}


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_increment_in_place_keeps_dtype(dtype):
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        i = opkit.layers.fill_constant([1], dtype, 3)
        opkit.layers.increment(i, value=2.0, in_place=True)
    (value,) = opkit.Executor().run(main, fetch_list=[i], scope=opkit.Scope())
    assert value.dtype == np.dtype(dtype)
    assert value.tolist() == [5]
