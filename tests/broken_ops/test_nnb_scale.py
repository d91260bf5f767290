import numpy as np
from harness import OpTest


class TestBrokenNnbScale(OpTest):
    op = "broken_nnb_scale"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(15).uniform(-1, 1, (4, 5))
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] * 3}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodNnbScale(TestBrokenNnbScale):
    op = "good_nnb_scale"
