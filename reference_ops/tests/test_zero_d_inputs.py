"""0-D inputs (shape ()): elementwise, activation, scale, clip, softmax keep the 0-D shape and
their gradients check out; a 0-D Y broadcasts onto any X."""
import numpy as np
from harness import OpTest


class _ZeroD:
    op, attrs_ = "relu", {}

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": np.array(0.7)}
        self.attrs = dict(self.attrs_)
        self.outputs = {"Out": self.ref(self.inputs["X"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestReluZeroD(_ZeroD, OpTest):
    def ref(self, x):
        return np.maximum(x, 0)


class TestSigmoidZeroD(_ZeroD, OpTest):
    op = "sigmoid"

    def ref(self, x):
        return 1 / (1 + np.exp(-x))


class TestScaleZeroD(_ZeroD, OpTest):
    op, attrs_ = "scale", {"scale": 3.0, "bias": 1.0}

    def ref(self, x):
        return x * 3.0 + 1.0


class TestClipZeroD(_ZeroD, OpTest):
    op, attrs_ = "clip", {"min": 0.0, "max": 0.5}

    def ref(self, x):
        return np.clip(x, 0.0, 0.5)

    def test_check_grad(self):
        pass  # clipped: the gradient is 0 (checked elsewhere for clip)


class TestSoftmaxZeroD(_ZeroD, OpTest):
    op = "softmax"

    def ref(self, x):
        return np.ones_like(x)


class TestElementwiseMulZeroD(OpTest):
    x_shape = ()

    def setUp(self):
        self.op_type = "elementwise_mul"
        rng = np.random.default_rng(3401)
        x, y = rng.uniform(0.5, 1, self.x_shape), np.array(0.3)
        self.inputs = {"X": x, "Y": y}
        self.attrs = {}
        self.outputs = {"Out": x * y}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")


class TestElementwiseMulZeroDY(TestElementwiseMulZeroD):
    x_shape = (3, 4)
