"""OpTests of coverage_breakers_op.py: ordinary cases, written as an op author would."""
import numpy as np

from harness import OpTest


def _x(shape, seed, lo=-1.0, hi=1.0):
    x = np.random.default_rng(seed).uniform(lo, hi, shape)
    x[np.abs(x) < 0.05] = 0.3
    return x


class TestBrokenOnegradMul(OpTest):
    op = "broken_onegrad_mul"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x((3, 4), 1), "Y": _x((3, 4), 2)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] * inputs["Y"]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")


class TestGoodOnegradMul(TestBrokenOnegradMul):
    op = "good_onegrad_mul"


class TestBrokenF64in32Tanh(OpTest):
    op = "broken_f64in32_tanh"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x((4, 5), 3)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.tanh(inputs["X"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodF64in32Tanh(TestBrokenF64in32Tanh):
    op = "good_f64in32_tanh"


class TestBrokenNegaxisSoftmax(OpTest):
    op = "broken_negaxis_softmax"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x((4, 6), 4, -2, 2)}
        self.attrs = {"axis": -1}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, a = inputs["X"], attrs["axis"]
        e = np.exp(x - x.max(axis=a, keepdims=True))
        return {"Out": e / e.sum(axis=a, keepdims=True)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodNegaxisSoftmax(TestBrokenNegaxisSoftmax):
    op = "good_negaxis_softmax"


class TestBrokenBiasScale(OpTest):
    op = "broken_bias_scale"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x((3, 4), 5)}
        self.attrs = {"scale": 2.5, "bias": 0.5}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        s, b = attrs.get("scale", 1.0), attrs.get("bias", 0.0)
        if attrs.get("bias_after_scale", True):
            return {"Out": inputs["X"] * s + b}
        return {"Out": (inputs["X"] + b) * s}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodBiasScale(TestBrokenBiasScale):
    op = "good_bias_scale"


class TestBrokenIntRelu(OpTest):
    op = "broken_int_relu"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x((3, 4), 6)}
        self.attrs = {}
        self.outputs = {"Out": np.maximum(self.inputs["X"], 0)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodIntRelu(TestBrokenIntRelu):
    op = "good_int_relu"


class TestBrokenSqueezeSum(OpTest):
    op = "broken_squeeze_sum"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x((3, 4, 5), 7)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"].sum(axis=1)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodSqueezeSum(TestBrokenSqueezeSum):
    op = "good_squeeze_sum"


class TestBrokenBcastAdd(OpTest):
    op = "broken_bcast_add"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x((2, 3, 4), 8), "Y": _x((3, 4), 9)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] + inputs["Y"]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")


class TestGoodBcastAdd(TestBrokenBcastAdd):
    op = "good_bcast_add"
