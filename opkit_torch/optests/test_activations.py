import numpy as np

from harness import OpTest


class TestHardshrink(OpTest):
    def setUp(self):
        self.op_type = "aten::hardshrink"
        x = np.random.default_rng(1).uniform(-1, 1, (5, 7))
        x[np.abs(np.abs(x) - 0.3) < 0.02] = 0.9      # away from the kinks at +-lambd
        self.inputs = {"self": x}
        self.attrs = {"lambd": 0.3}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["self"]
        return {"out": np.where(np.abs(x) > attrs["lambd"], x, 0.0)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "out")
