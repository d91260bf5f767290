import numpy as np
from harness import OpTest


class TestBrokenMutateScale(OpTest):
    op = "broken_mutate_scale"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(12).uniform(-1, 1, (4, 5))
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] * 2}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodMutateScale(TestBrokenMutateScale):
    op = "good_mutate_scale"
