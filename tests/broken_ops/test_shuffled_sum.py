import numpy as np
from harness import OpTest


class TestBrokenShuffledSum(OpTest):
    op = "broken_shuffled_sum"

    def setUp(self):
        self.op_type = self.op
        # magnitudes spread over many binades: the order of the additions shows in the bits
        rng = np.random.default_rng(13)
        x = rng.uniform(-1, 1, (6, 40)) * 10.0 ** rng.integers(-2, 1, (6, 40))
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"].sum(axis=1)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodShuffledSum(TestBrokenShuffledSum):
    op = "good_shuffled_sum"
