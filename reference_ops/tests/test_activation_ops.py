"""OpTests of the activation family (reference_ops/_activation.py): each op against an
independent numpy formula, with a numeric gradient check (a zero gradient for ceil, floor
and round). Inputs keep away from each op's kinks so that the numeric gradient is sound."""
import math
import zlib

import numpy as np
from harness import OpTest


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _erf(x):
    return np.vectorize(math.erf)(x)


class _Act:
    op_type = None
    low, high, shape = -1.0, 1.0, (6, 7)
    kinks = ()                      # x values to keep 0.05 away from
    attrs = {}
    max_relative_error = 0.005
    zero_grad = False

    def setUp(self):
        rng = np.random.default_rng(zlib.crc32(self.op_type.encode()) % 1000)   # not hash(): the
        # inputs must be the same in every process, whatever PYTHONHASHSEED is
        x = rng.uniform(self.low, self.high, self.shape)
        for k in self.kinks:
            near = np.abs(x - k) < 0.05
            x[near] = k + 0.1
        self.inputs = {"X": x.astype("float64")}
        self.attrs = dict(type(self).attrs)
        self.outputs = {"Out": self.ref(x)}

    def ref(self, x):
        raise NotImplementedError

    def reference(self, inputs, attrs):
        """The outputs of other inputs (what `opkit test`'s fuzzing draws). `ref` has the
        class's attrs built in: other attrs are refused (the fuzzer then draws again)."""
        if dict(attrs) != dict(type(self).attrs):
            raise ValueError(f"reference knows only attrs {type(self).attrs}")
        return {"Out": self.ref(np.asarray(inputs["X"]))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        if self.zero_grad:   # piecewise constant: the analytic gradient is 0 (as in Paddle)
            self.check_grad(["X"], "Out", user_defined_grads=[np.zeros(self.shape)])
        else:
            self.check_grad(["X"], "Out", max_relative_error=self.max_relative_error)


class TestExp(_Act, OpTest):
    op_type = "exp"

    def ref(self, x):
        return np.exp(x)


class TestSigmoid(_Act, OpTest):
    op_type = "sigmoid"
    low, high = -6, 6

    def ref(self, x):
        return _sigmoid(x)


class TestSigmoidLargeInputs(_Act, OpTest):
    """|x| up to 800: the stable form neither overflows nor returns nan."""
    op_type = "sigmoid"
    low, high = -800, 800

    def ref(self, x):
        with np.errstate(over="ignore"):
            return 1.0 / (1.0 + np.exp(-x))

    def test_check_grad(self):
        pass  # the gradient is ~0 almost everywhere at this scale


class TestLogSigmoid(_Act, OpTest):
    op_type = "logsigmoid"
    low, high = -5, 5

    def ref(self, x):
        return np.log(_sigmoid(x))


class TestTanh(_Act, OpTest):
    op_type = "tanh"

    def ref(self, x):
        return np.tanh(x)


class TestTanhShrink(_Act, OpTest):
    op_type = "tanh_shrink"
    low, high = 0.1, 1.0

    def ref(self, x):
        return x - np.tanh(x)


class TestHardShrink(_Act, OpTest):
    op_type = "hard_shrink"
    low, high, kinks = -2, 2, (-0.3, 0.3)
    attrs = {"threshold": 0.3}

    def ref(self, x):
        return x * (np.abs(x) > 0.3)   # NaN stays NaN, as Paddle's x * mask


class TestSoftShrink(_Act, OpTest):
    op_type = "softshrink"
    low, high, kinks = -2, 2, (-0.4, 0.4)
    attrs = {"lambda": 0.4}

    def ref(self, x):
        # x - l above l, x + l below -l, else 0 (NaN stays NaN, as Paddle's and torch's);
        # never mask * value: 0 * (inf + l) is NaN where softshrink(+inf) is +inf
        return np.where(x > 0.4, x - 0.4, np.where(x < -0.4, x + 0.4, np.where(x == x, 0, x)))


class TestSoftShrinkInfinities(TestSoftShrink):
    """softshrink(+-inf) is +-inf (torch.nn.functional.softshrink agrees; opkit's kernel gave
    NaN, found by `--against torch`), NaN stays NaN."""
    def setUp(self):
        super().setUp()
        x = self.inputs["X"].copy()
        x[0, :4] = [np.inf, -np.inf, np.nan, 0.1]
        self.inputs = {"X": x}
        self.outputs = {"Out": self.ref(x)}
        assert list(self.outputs["Out"][0, :2]) == [np.inf, -np.inf]

    def test_check_output(self):
        self.check_output(equal_nan=True)

    test_check_grad = None      # the numeric gradient is undefined at +-inf


class TestSqrt(_Act, OpTest):
    op_type = "sqrt"
    low, high = 0.1, 2

    def ref(self, x):
        return np.sqrt(x)


class TestRsqrt(_Act, OpTest):
    op_type = "rsqrt"
    low, high = 0.5, 4

    def ref(self, x):
        return 1.0 / np.sqrt(x)


class TestAbs(_Act, OpTest):
    op_type = "abs"
    kinks = (0.0,)

    def ref(self, x):
        return np.abs(x)


class TestCeil(_Act, OpTest):
    op_type = "ceil"
    low, high, zero_grad = -3, 3, True

    def ref(self, x):
        return np.ceil(x)


class TestFloor(_Act, OpTest):
    op_type = "floor"
    low, high, zero_grad = -3, 3, True

    def ref(self, x):
        return np.floor(x)


class TestRound(_Act, OpTest):
    op_type = "round"
    low, high, zero_grad = -3, 3, True
    kinks = (-2.5, -1.5, -0.5, 0.5, 1.5, 2.5)

    def ref(self, x):
        return np.round(x)


class TestCos(_Act, OpTest):
    op_type = "cos"
    low, high = -3, 3

    def ref(self, x):
        return np.cos(x)


class TestSin(_Act, OpTest):
    op_type = "sin"
    low, high = -3, 3

    def ref(self, x):
        return np.sin(x)


class TestAcos(_Act, OpTest):
    op_type = "acos"
    low, high = -0.9, 0.9

    def ref(self, x):
        return np.arccos(x)


class TestAsin(_Act, OpTest):
    op_type = "asin"
    low, high = -0.9, 0.9

    def ref(self, x):
        return np.arcsin(x)


class TestAtan(_Act, OpTest):
    op_type = "atan"
    low, high = -3, 3

    def ref(self, x):
        return np.arctan(x)


class TestLeakyRelu(_Act, OpTest):
    op_type = "leaky_relu"
    kinks = (0.0,)
    attrs = {"alpha": 0.1}

    def ref(self, x):
        return np.where(x > 0, x, 0.1 * x)


class TestLeakyReluDefaultAlpha(_Act, OpTest):
    op_type = "leaky_relu"
    kinks = (0.0,)

    def ref(self, x):
        return np.where(x > 0, x, 0.02 * x)


class TestGelu(_Act, OpTest):
    op_type = "gelu"
    low, high = -3, 3

    def ref(self, x):
        return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


class TestGeluApproximate(_Act, OpTest):
    op_type = "gelu"
    low, high = -3, 3
    attrs = {"approximate": True}

    def ref(self, x):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


class TestBRelu(_Act, OpTest):
    op_type = "brelu"
    low, high, kinks = -5, 10, (1.0, 4.0)
    attrs = {"t_min": 1.0, "t_max": 4.0}

    def ref(self, x):
        return np.clip(x, 1.0, 4.0)


class TestRelu6(_Act, OpTest):
    op_type = "relu6"
    low, high, kinks = -2, 8, (0.0, 6.0)

    def ref(self, x):
        return np.minimum(np.maximum(x, 0), 6.0)


class TestHardSwish(_Act, OpTest):
    op_type = "hard_swish"
    low, high, kinks = -6, 6, (-3.0, 3.0)

    def ref(self, x):
        return x * np.minimum(np.maximum(x + 3, 0), 6) / 6


class TestHardSwishThresholdNotScale(_Act, OpTest):
    """threshold != scale: above the threshold the slope is threshold/scale."""
    op_type = "hard_swish"
    low, high, kinks = -6, 8, (-2.0, 2.0)
    attrs = {"threshold": 4.0, "scale": 5.0, "offset": 2.0}

    def ref(self, x):
        return x * np.minimum(np.maximum(x + 2, 0), 4) / 5


class TestSoftRelu(_Act, OpTest):
    op_type = "soft_relu"
    low, high, kinks = -4, 4, (-2.0, 2.0)
    attrs = {"threshold": 2.0}

    def ref(self, x):
        return np.log(1 + np.exp(np.clip(x, -2, 2)))


class TestElu(_Act, OpTest):
    op_type = "elu"
    low, high, kinks = -3, 3, (0.0,)
    attrs = {"alpha": 0.7}

    def ref(self, x):
        return np.maximum(0, x) + np.minimum(0, 0.7 * (np.exp(x) - 1))


class TestReciprocal(_Act, OpTest):
    op_type = "reciprocal"
    low, high = 1, 2

    def ref(self, x):
        return 1.0 / x


class TestLog(_Act, OpTest):
    op_type = "log"
    low, high = 0.1, 2

    def ref(self, x):
        return np.log(x)


class TestLog1p(_Act, OpTest):
    op_type = "log1p"
    low, high = 0.1, 2

    def ref(self, x):
        return np.log1p(x)


class TestPow(_Act, OpTest):
    op_type = "pow"
    low, high = 1, 2
    attrs = {"factor": 3.0}

    def ref(self, x):
        return x ** 3


class TestPowFactorTensor(_Act, OpTest):
    """Input(FactorTensor) takes priority over attr factor."""
    op_type = "pow"
    low, high = 1, 2
    attrs = {"factor": 5.0}

    def setUp(self):
        super().setUp()
        self.inputs["FactorTensor"] = np.array([2.5], dtype="float32")

    def ref(self, x):
        return x ** 2.5

    def reference(self, inputs, attrs):
        # the factor comes from the FactorTensor input (a generated case draws it too)
        factor = float(np.asarray(inputs["FactorTensor"]).reshape(-1)[0])
        return {"Out": np.asarray(inputs["X"]) ** factor}

    def test_check_grad(self):
        self.check_grad(["X"], "Out", no_grad_set={"FactorTensor"})


class TestSTanh(_Act, OpTest):
    op_type = "stanh"
    low, high = -2, 2

    def ref(self, x):
        return 1.7159 * np.tanh(0.67 * x)


class TestSoftplus(_Act, OpTest):
    op_type = "softplus"
    low, high = -5, 5

    def ref(self, x):
        return np.log(1 + np.exp(x))


class TestSoftsign(_Act, OpTest):
    op_type = "softsign"
    low, high, kinks = -3, 3, (0.0,)

    def ref(self, x):
        return x / (1 + np.abs(x))


class TestThresholdedRelu(_Act, OpTest):
    op_type = "thresholded_relu"
    low, high, kinks = -2, 2, (0.5,)
    attrs = {"threshold": 0.5}

    def ref(self, x):
        return x * (x > 0.5)   # NaN stays NaN, as Paddle's x * mask


class TestHardSigmoid(_Act, OpTest):
    op_type = "hard_sigmoid"
    low, high, kinks = -4, 4, (-2.5, 2.5)

    def ref(self, x):
        return np.clip(0.2 * x + 0.5, 0, 1)


class TestSwish(_Act, OpTest):
    op_type = "swish"
    low, high = -3, 3
    attrs = {"beta": 1.5}

    def ref(self, x):
        return x * _sigmoid(1.5 * x)
