import numpy as np
from harness import OpTest


class TestBrokenF32Square(OpTest):
    op = "broken_f32_square"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(14).uniform(-1, 1, (4, 5))
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] ** 2}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodF32Square(TestBrokenF32Square):
    op = "good_f32_square"
