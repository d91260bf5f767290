import numpy as np
from harness import OpTest


class TestReluOp(OpTest):
    def setUp(self):
        self.op_type = "relu"
        x = np.random.default_rng(601).uniform(-1, 1, (11, 17)).astype("float64")
        x[np.abs(x) < 0.01] = 0.1  # keep away from the kink for the numeric gradient
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.maximum(inputs["X"], 0)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")
