import numpy as np
from harness import OpTest


class TestBrokenSignRelu(OpTest):
    op = "broken_sign_relu"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(11).uniform(-1, 1, (4, 5))
        x[np.abs(x) < 0.05] = 0.3
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.maximum(inputs["X"], 0)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodSignRelu(TestBrokenSignRelu):
    op = "good_sign_relu"
