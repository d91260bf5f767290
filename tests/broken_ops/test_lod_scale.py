import numpy as np
from harness import OpTest


class TestBrokenLodScale(OpTest):
    op = "broken_lod_scale"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(17).uniform(-1, 1, (5, 3))
        self.inputs = {"X": (x, [[2, 0, 3]])}
        self.attrs = {}
        self.outputs = {"Out": (x * 2, [[2, 0, 3]])}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        if isinstance(x, tuple):
            return {"Out": (x[0] * 2, x[1])}
        return {"Out": x * 2}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodLodScale(TestBrokenLodScale):
    op = "good_lod_scale"
