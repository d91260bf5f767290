"""OpTests of torch's activation ops (aten), in opkit's OpTest format: inputs and attrs
keyed by the schema's argument names, outputs by the output slot names ("out")."""
import numpy as np
from math import erf, sqrt

from harness import OpTest


def _x(seed, shape=(5, 7), low=-2.0, high=2.0, away=()):
    x = np.random.default_rng(seed).uniform(low, high, shape)
    for k in away:                                  # keep off the kinks for numeric grads
        x[np.abs(x - k) < 0.02] = k + 0.1
    return x


class _Unary:
    """One float input `self`, one output `out` (a mixin: not collected itself)."""

    kinks = ()

    def setUp(self):
        self.inputs = {"self": _x(self.seed, away=self.kinks)}
        self.attrs = dict(self.given_attrs)
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "out")


class TestHardshrink(_Unary, OpTest):
    op_type, seed, given_attrs, kinks = "aten::hardshrink", 1, {"lambd": 0.3}, (-0.3, 0.3)

    def reference(self, inputs, attrs):
        x, lambd = inputs["self"], attrs.get("lambd", 0.5)
        return {"out": np.where(np.isnan(x) | (np.abs(x) > lambd), x, 0.0)}   # NaN stays NaN


class TestRelu(_Unary, OpTest):
    op_type, seed, given_attrs, kinks = "aten::relu", 2, {}, (0.0,)

    def reference(self, inputs, attrs):
        return {"out": np.maximum(inputs["self"], 0)}


class TestGelu(_Unary, OpTest):
    op_type, seed, given_attrs = "aten::gelu", 3, {"approximate": "none"}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        if attrs.get("approximate", "none") == "tanh":
            return {"out": 0.5 * x * (1 + np.tanh(sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))}
        return {"out": 0.5 * x * (1 + np.vectorize(erf)(x / sqrt(2)))}


class TestSilu(_Unary, OpTest):
    op_type, seed, given_attrs = "aten::silu", 4, {}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        return {"out": x / (1 + np.exp(-x))}


class TestElu(_Unary, OpTest):
    op_type, seed, given_attrs, kinks = "aten::elu", 5, {"alpha": 0.7}, (0.0,)

    def reference(self, inputs, attrs):
        x = inputs["self"]
        a, s, i = attrs.get("alpha", 1), attrs.get("scale", 1), attrs.get("input_scale", 1)
        return {"out": np.where(x > 0, s * x, s * a * (np.exp(i * x) - 1))}


class TestLeakyRelu(_Unary, OpTest):
    op_type, seed, given_attrs, kinks = "aten::leaky_relu", 6, {"negative_slope": 0.2}, (0.0,)

    def reference(self, inputs, attrs):
        x = inputs["self"]
        return {"out": np.where(x > 0, x, attrs.get("negative_slope", 0.01) * x)}


class TestSoftplus(_Unary, OpTest):
    op_type, seed, given_attrs = "aten::softplus", 7, {"beta": 2.0, "threshold": 20.0}

    def reference(self, inputs, attrs):
        x, b, t = inputs["self"], attrs.get("beta", 1), attrs.get("threshold", 20)
        return {"out": np.where(b * x > t, x, np.log1p(np.exp(b * x)) / b)}


class TestHardtanh(_Unary, OpTest):
    op_type, seed, kinks = "aten::hardtanh", 8, (-1.0, 1.0)
    given_attrs = {"min_val": -1.0, "max_val": 1.0}

    def reference(self, inputs, attrs):
        return {"out": np.clip(inputs["self"], attrs.get("min_val", -1), attrs.get("max_val", 1))}


class TestMish(_Unary, OpTest):
    op_type, seed, given_attrs = "aten::mish", 9, {}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        return {"out": x * np.tanh(np.log1p(np.exp(x)))}


class TestSigmoid(_Unary, OpTest):
    op_type, seed, given_attrs = "aten::sigmoid", 10, {}

    def reference(self, inputs, attrs):
        return {"out": 1 / (1 + np.exp(-inputs["self"]))}


class TestTanh(_Unary, OpTest):
    op_type, seed, given_attrs = "aten::tanh", 11, {}

    def reference(self, inputs, attrs):
        return {"out": np.tanh(inputs["self"])}


class TestLogSigmoid(_Unary, OpTest):
    op_type, seed, given_attrs = "aten::log_sigmoid", 12, {}

    def reference(self, inputs, attrs):
        return {"out": -np.logaddexp(0.0, -inputs["self"])}
