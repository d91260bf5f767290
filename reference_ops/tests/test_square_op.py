import numpy as np
from harness import OpTest


class TestSquareOp(OpTest):
    def setUp(self):
        self.op_type = "square"
        self.inputs = {"X": np.random.default_rng(301).uniform(-1, 1, (10, 17)).astype("float64")}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.square(inputs["X"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestSquareOpLoD(TestSquareOp):
    def setUp(self):
        super().setUp()
        x = self.inputs["X"]
        self.inputs = {"X": (x, [[3, 0, 7]])}
        self.outputs = {"Out": (np.square(x), [[3, 0, 7]])}
