"""The OpTest of a custom op. The op comes from the module that registers it, loaded with
`--ops opkit_torch/optests/mylib_ops.py` (or [tool.opkit] ops): this file does not import
it, so that one module is never registered twice under two names."""
import numpy as np

from harness import OpTest


class TestScaledSoftplus(OpTest):
    def setUp(self):
        self.op_type = "mylib::scaled_softplus"
        self.inputs = {"x": np.random.default_rng(3).uniform(-3, 3, (6, 5))}
        self.attrs = {"beta": 2.0}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        b = attrs.get("beta", 1.0)
        return {"out": np.logaddexp(0.0, b * inputs["x"]) / b}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["x"], "out")
