import numpy as np

from harness import OpTest


class TestFillAnyLikeOp(OpTest):
    def setUp(self):
        self.op_type = "fill_any_like"
        x = np.random.default_rng(3).normal(size=(12, 10))
        self.inputs = {"X": (x, [[3, 0, 9]])}
        self.attrs = {"value": 1.5}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, lod = inputs["X"]
        return {"Out": (np.full_like(x, attrs["value"]), lod)}

    def test_check_output(self):
        self.check_output()


class TestFillZerosLikeOp(OpTest):
    def setUp(self):
        self.op_type = "fill_zeros_like"
        x = np.random.default_rng(4).normal(size=(12, 10))
        self.inputs = {"X": x}
        self.outputs = {"Out": np.zeros_like(x)}

    def test_check_output(self):
        self.check_output()
