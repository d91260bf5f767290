"""More OpTests of torch ops (aten): elementwise math, reductions with indices, cumulative
ops with indices, sorting, matmul and shape ops."""
import numpy as np
from math import erf

from harness import OpTest


def _x(seed, shape=(4, 5), low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


class _Unary:
    """One float input `self`, one output `out` (a mixin: not collected itself)."""

    low, high, attrs_given = -2.0, 2.0, {}

    def setUp(self):
        self.inputs = {"self": _x(self.seed, (4, 5), self.low, self.high)}
        self.attrs = dict(self.attrs_given)
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"out": self.fn(inputs["self"], attrs)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "out")


def _unary(op_type, seed, fn, **extra):
    return type(f"Test_{op_type.split('::')[1].replace('.', '_')}", (_Unary, OpTest),
                dict(op_type=op_type, seed=seed, fn=staticmethod(fn), **extra))


TestExp = _unary("aten::exp", 61, lambda x, a: np.exp(x))
TestLog = _unary("aten::log", 62, lambda x, a: np.log(x), low=0.2, high=3.0)
TestSqrt = _unary("aten::sqrt", 63, lambda x, a: np.sqrt(x), low=0.2, high=3.0)
TestRsqrt = _unary("aten::rsqrt", 64, lambda x, a: 1 / np.sqrt(x), low=0.2, high=3.0)
TestSin = _unary("aten::sin", 65, lambda x, a: np.sin(x))
TestCos = _unary("aten::cos", 66, lambda x, a: np.cos(x))
TestReciprocal = _unary("aten::reciprocal", 67, lambda x, a: 1 / x, low=0.5, high=2.0)
TestNeg = _unary("aten::neg", 68, lambda x, a: -x)
TestErf = _unary("aten::erf", 69, lambda x, a: np.vectorize(erf)(x))
TestSinh = _unary("aten::sinh", 70, lambda x, a: np.sinh(x))
TestAtan = _unary("aten::atan", 71, lambda x, a: np.arctan(x))
TestLogit = _unary("aten::logit", 72, lambda x, a: np.log(x / (1 - x)), low=0.1, high=0.9)
TestCelu = _unary("aten::celu", 73, lambda x, a: np.where(
    x > 0, x, a.get("alpha", 1.0) * (np.exp(x / a.get("alpha", 1.0)) - 1)),
    attrs_given={"alpha": 1.5})
TestSelu = _unary("aten::selu", 74, lambda x, a: 1.0507009873554805 * np.where(
    x > 0, x, 1.6732632423543772 * (np.exp(x) - 1)))
TestHardsigmoid = _unary("aten::hardsigmoid", 75, lambda x, a: np.clip(x / 6 + 0.5, 0, 1))
TestHardswish = _unary("aten::hardswish", 76, lambda x, a: x * np.clip(x + 3, 0, 6) / 6)
TestSoftshrink = _unary("aten::softshrink", 77, lambda x, a: np.where(
    x > a.get("lambd", 0.5), x - a.get("lambd", 0.5),
    np.where(x < -a.get("lambd", 0.5), x + a.get("lambd", 0.5), x * 0.0)),   # NaN stays NaN
    attrs_given={"lambd": 0.4})
TestExpm1 = _unary("aten::expm1", 78, lambda x, a: np.expm1(x))
TestLog1p = _unary("aten::log1p", 79, lambda x, a: np.log1p(x), low=-0.5, high=2.0)
TestStd = _unary("aten::std.correction", 80, lambda x, a: x.std(
    axis=tuple(a["dim"]), ddof=1), attrs_given={"dim": [1], "correction": 1})
TestAmin = _unary("aten::amin", 81, lambda x, a: x.min(axis=tuple(a["dim"])),
                  attrs_given={"dim": [0]})
TestVectorNorm = _unary("aten::linalg_vector_norm", 82, lambda x, a: np.sqrt(
    (x ** 2).sum(axis=tuple(a["dim"]))), attrs_given={"ord": 2, "dim": [1]})


class TestMaxDim(OpTest):
    def setUp(self):
        self.op_type = "aten::max.dim"
        self.inputs = {"self": np.random.default_rng(83).permutation(20).reshape(4, 5) / 3.0}
        self.attrs = {"dim": 1, "keepdim": False}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["self"]
        return {"values": x.max(attrs["dim"]), "indices": x.argmax(attrs["dim"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "values")


class TestCummax(OpTest):
    def setUp(self):
        self.op_type = "aten::cummax"
        self.inputs = {"self": np.random.default_rng(84).permutation(20).reshape(4, 5) / 3.0}
        self.attrs = {"dim": 1}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, dim = inputs["self"], attrs["dim"]
        values = np.maximum.accumulate(x, axis=dim)
        # the index of the running maximum along `dim` (torch keeps the last of equal ones)
        xm = np.moveaxis(x, dim, -1)
        idx = np.zeros(xm.shape, np.int64)
        for j in range(1, xm.shape[-1]):
            prev = np.take_along_axis(xm, idx[..., j - 1:j], -1)[..., 0]
            x = xm[..., j]     # torch's rule: NaN is the maximum (the last NaN wins)
            take = np.isnan(x) | (~np.isnan(prev) & (x >= prev))
            idx[..., j] = np.where(take, j, idx[..., j - 1])
        return {"values": values, "indices": np.moveaxis(idx, -1, dim)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "values")


class TestTopk(OpTest):
    def setUp(self):
        self.op_type = "aten::topk"
        self.inputs = {"self": np.random.default_rng(85).permutation(24).reshape(4, 6) / 5.0}
        self.attrs = {"k": 3, "dim": -1}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["self"]     # torch orders NaN above every number (torch.sort's rule)
        idx = np.argsort(-np.where(np.isnan(x), np.inf, x), axis=-1, kind="stable")
        idx = idx[:, :attrs["k"]]
        return {"values": np.take_along_axis(x, idx, -1), "indices": idx}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "values")


class TestBmm(OpTest):
    def setUp(self):
        self.op_type = "aten::bmm"
        self.inputs = {"self": _x(86, (2, 3, 4)), "mat2": _x(87, (2, 4, 5))}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"out": inputs["self"] @ inputs["mat2"]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self", "mat2"], "out")


class TestWhere(OpTest):
    def setUp(self):
        self.op_type = "aten::where.self"
        self.inputs = {"condition": _x(88) > 0, "self": _x(89), "other": _x(90)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"out": np.where(inputs["condition"], inputs["self"], inputs["other"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self", "other"], "out")


class TestCat(OpTest):
    def setUp(self):
        self.op_type = "aten::cat"
        self.inputs = {"tensors": [("a", _x(91, (2, 3))), ("b", _x(92, (4, 3)))]}
        self.attrs = {"dim": 0}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"out": np.concatenate([v for _, v in inputs["tensors"]], attrs.get("dim", 0))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["a", "b"], "out")


class TestLerp(OpTest):
    def setUp(self):
        self.op_type = "aten::lerp.Tensor"
        self.inputs = {"self": _x(93), "end": _x(94), "weight": _x(95, low=0, high=1)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        s, e, w = inputs["self"], inputs["end"], inputs["weight"]
        return {"out": s + w * (e - s)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self", "end", "weight"], "out")
