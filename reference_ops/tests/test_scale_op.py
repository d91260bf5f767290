import numpy as np
from harness import OpTest


class TestScaleOp(OpTest):
    attrs_ = {"scale": -2.3}

    def setUp(self):
        self.op_type = "scale"
        self.inputs = {"X": np.random.default_rng(501).uniform(-1, 1, (10, 11)).astype("float64")}
        self.attrs = dict(self.attrs_)
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["X"]
        scale, bias = attrs.get("scale", 1.0), attrs.get("bias", 0.0)
        if attrs.get("bias_after_scale", True):
            return {"Out": x * scale + bias}
        return {"Out": (x + bias) * scale}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestScaleOpBias(TestScaleOp):
    attrs_ = {"scale": 1.5, "bias": 0.7}


class TestScaleOpBiasBeforeScale(TestScaleOp):
    attrs_ = {"scale": 1.5, "bias": 0.7, "bias_after_scale": False}
