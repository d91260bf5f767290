import numpy as np
from harness import OpTest


class TestMeanOp(OpTest):
    shape = (12, 13)

    def setUp(self):
        self.op_type = "mean"
        self.inputs = {"X": np.random.default_rng(401).uniform(-1, 1, self.shape).astype("float64")}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.array([np.mean(inputs["X"])])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestMeanOp3D(TestMeanOp):
    shape = (4, 5, 6)
