"""OpTests of torch's reductions, softmax and cumulative ops (aten)."""
import numpy as np

from harness import OpTest


def _x(seed, shape=(4, 5, 3), low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


class _One:
    """One float input `self`, one output `out`."""

    low, high, shape = -2.0, 2.0, (4, 5, 3)

    def setUp(self):
        self.inputs = {"self": _x(self.seed, self.shape, self.low, self.high)}
        self.attrs = dict(self.given_attrs)
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "out")


def _dims(attrs, ndim):
    d = attrs.get("dim")
    return tuple(range(ndim)) if d is None or d == [] else tuple(d)


class TestSumDim(_One, OpTest):
    op_type, seed, given_attrs = "aten::sum.dim_IntList", 21, {"dim": [1], "keepdim": True}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        return {"out": x.sum(axis=_dims(attrs, x.ndim), keepdims=attrs.get("keepdim", False))}


class TestMeanDim(_One, OpTest):
    op_type, seed, given_attrs = "aten::mean.dim", 22, {"dim": [0, 2], "keepdim": False}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        return {"out": x.mean(axis=_dims(attrs, x.ndim), keepdims=attrs.get("keepdim", False))}


class TestAmax(_One, OpTest):
    op_type, seed, given_attrs = "aten::amax", 23, {"dim": [2], "keepdim": False}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        return {"out": x.max(axis=_dims(attrs, x.ndim), keepdims=attrs.get("keepdim", False))}


class TestLogsumexp(_One, OpTest):
    op_type, seed, given_attrs = "aten::logsumexp", 24, {"dim": [1], "keepdim": False}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        axis = _dims(attrs, x.ndim)
        m = x.max(axis=axis, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)      # a +inf element gives +inf, not inf - inf
        with np.errstate(divide="ignore", over="ignore"):
            out = np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m
        return {"out": out if attrs.get("keepdim", False) else out.squeeze(axis)}


class TestProd(_One, OpTest):
    op_type, seed, given_attrs, low, high = "aten::prod", 25, {}, 0.5, 1.5

    def reference(self, inputs, attrs):
        return {"out": np.array(np.prod(inputs["self"]))}


class TestVarCorrection(_One, OpTest):
    op_type, seed = "aten::var.correction", 26
    given_attrs = {"dim": [1], "correction": 1, "keepdim": False}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        c = attrs.get("correction")
        return {"out": x.var(axis=_dims(attrs, x.ndim), ddof=1 if c is None else c,
                             keepdims=attrs.get("keepdim", False))}


class TestSoftmax(_One, OpTest):
    op_type, seed = "aten::_softmax", 27
    given_attrs = {"dim": 1, "half_to_float": False}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        e = np.exp(x - x.max(axis=attrs["dim"], keepdims=True))
        return {"out": e / e.sum(axis=attrs["dim"], keepdims=True)}


class TestLogSoftmax(_One, OpTest):
    op_type, seed = "aten::_log_softmax", 28
    given_attrs = {"dim": -1, "half_to_float": False}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        m = x.max(axis=attrs["dim"], keepdims=True)
        return {"out": x - m - np.log(np.exp(x - m).sum(axis=attrs["dim"], keepdims=True))}


class TestCumsum(_One, OpTest):
    op_type, seed, given_attrs = "aten::cumsum", 29, {"dim": 1}

    def reference(self, inputs, attrs):
        x = inputs["self"]
        return {"out": np.cumsum(x, axis=attrs["dim"]).reshape(x.shape)}


class TestCumprod(_One, OpTest):
    op_type, seed, given_attrs, low, high = "aten::cumprod", 30, {"dim": 0}, 0.5, 1.5

    def reference(self, inputs, attrs):
        x = inputs["self"]          # (np.cumprod gives a 0-d input shape [1])
        return {"out": np.cumprod(x, axis=attrs["dim"]).reshape(x.shape)}


class TestLogcumsumexp(_One, OpTest):
    op_type, seed, given_attrs = "aten::logcumsumexp", 31, {"dim": 2}

    def reference(self, inputs, attrs):
        return {"out": np.logaddexp.accumulate(inputs["self"], axis=attrs["dim"])}
