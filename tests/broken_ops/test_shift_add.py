import numpy as np
from harness import OpTest


class TestBrokenShiftAdd(OpTest):
    op = "broken_shift_add"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(16).uniform(-1, 1, (6, 3))
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["X"]
        out = x.copy()
        out[1:] += x[:-1]
        return {"Out": out}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodShiftAdd(TestBrokenShiftAdd):
    op = "good_shift_add"
