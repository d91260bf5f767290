import numpy as np
from harness import OpTest


class TestClipOp(OpTest):
    lo, hi = -0.5, 0.5

    def setUp(self):
        self.op_type = "clip"
        x = np.random.default_rng(701).uniform(-1, 1, (10, 15)).astype("float64")
        # keep away from the clip points for the numeric gradient
        x[np.abs(x - self.lo) < 0.02] = self.lo + 0.1
        x[np.abs(x - self.hi) < 0.02] = self.hi - 0.1
        self.inputs = {"X": x}
        self.attrs = {"min": self.lo, "max": self.hi}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.clip(inputs["X"], attrs["min"], attrs["max"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestClipOpAsymmetric(TestClipOp):
    lo, hi = -0.2, 0.8
