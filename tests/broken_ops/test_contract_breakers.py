"""OpTests of tests/broken_ops/contract_breakers_op.py: each case is the author's ordinary
case, which the broken op passes (output and grad); only the second-order gradient, the
gradient of the output the test does not name, or the declared distribution shows the bug."""
import numpy as np

from harness import OpTest
from harness.judging.distributions import Bernoulli, Categorical, Normal


# -- double_grad --------------------------------------------------------------------------
class TestBrokenDgTanh(OpTest):
    op = "broken_dg_tanh"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(31).uniform(-1.5, 1.5, (5, 6))
        self.inputs = {"X": x}
        self.outputs = {"Out": np.tanh(x)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodDgTanh(TestBrokenDgTanh):
    op = "good_dg_tanh"


class TestBrokenDgSigmoid(OpTest):
    op = "broken_dg_sigmoid"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(32).uniform(-3, 3, (4, 7))
        self.inputs = {"X": x}
        self.outputs = {"Out": 1 / (1 + np.exp(-x))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodDgSigmoid(TestBrokenDgSigmoid):
    op = "good_dg_sigmoid"


class TestBrokenDgMul(OpTest):
    op = "broken_dg_mul"

    def setUp(self):
        self.op_type = self.op
        rng = np.random.default_rng(33)
        x, y = rng.uniform(-1, 1, (3, 5)), rng.uniform(-1, 1, (3, 5))
        self.inputs = {"X": x, "Y": y}
        self.outputs = {"Out": x * y}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")


class TestGoodDgMul(TestBrokenDgMul):
    op = "good_dg_mul"


# -- grad_outputs -------------------------------------------------------------------------
class TestBrokenVarMean(OpTest):
    """The test differentiates Var only (as many var_mean tests do)."""

    op = "broken_var_mean"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(34).uniform(-1, 1, (4, 6))
        self.inputs = {"X": x}
        self.outputs = {"Var": x.var(axis=-1), "Mean": x.mean(axis=-1)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Var")


class TestGoodVarMean(TestBrokenVarMean):
    op = "good_var_mean"


class TestBrokenSplitPair(OpTest):
    op = "broken_split_pair"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(35).uniform(-1, 1, (3, 8))
        self.inputs = {"X": x}
        self.outputs = {"First": x[:, :4], "Second": x[:, 4:]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "First")


class TestGoodSplitPair(TestBrokenSplitPair):
    op = "good_split_pair"


class TestBrokenScaledNorm(OpTest):
    op = "broken_scaled_norm"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(37).uniform(-1, 1, (3, 5))
        self.inputs = {"X": x}
        self.outputs = {"Y": 2 * x, "Norm": (x * x).sum(axis=-1)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Y")


class TestGoodScaledNorm(TestBrokenScaledNorm):
    op = "good_scaled_norm"


# -- distribution -------------------------------------------------------------------------
class TestBrokenNormal(OpTest):
    """std 1: sqrt(std) == std, so only another std shows the bug."""

    op = "broken_normal"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {}
        self.attrs = {"shape": [40, 25], "mean": 0.5, "std": 1.0, "seed": 5,
                      "dtype": "float64"}
        self.outputs = {"Out": np.zeros((40, 25))}
        self.distribution = {"Out": Normal(mean="mean", std="std")}

    def test_check_output(self):
        self.check_output(no_check_set=["Out"])


class TestGoodNormal(TestBrokenNormal):
    op = "good_normal"


class TestBrokenNormalF32(OpTest):
    """The case samples float64: only the float32 run shows the bug."""

    op = "broken_normal_f32"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {}
        self.attrs = {"shape": [50, 20], "mean": -1.0, "std": 2.0, "seed": 8,
                      "dtype": "float64"}
        self.outputs = {"Out": np.zeros((50, 20))}
        self.distribution = {"Out": Normal(mean="mean", std="std")}

    def test_check_output(self):
        self.check_output(no_check_set=["Out"])


class TestGoodNormalF32(TestBrokenNormalF32):
    op = "good_normal_f32"


class TestBrokenUniform(OpTest):
    """min 0: min + r * max == min + r * (max - min), so only another min shows the bug."""

    op = "broken_uniform"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {}
        self.attrs = {"shape": [30, 30], "min": 0.0, "max": 2.0, "seed": 6,
                      "dtype": "float64"}
        self.outputs = {"Out": np.zeros((30, 30))}
        # no declaration: the check infers Uniform(min, max) from the attrs (min, max, seed)

    def test_check_output(self):
        self.check_output(no_check_set=["Out"])


class TestGoodUniform(TestBrokenUniform):
    op = "good_uniform"


def _kept(a):
    p = a["dropout_prob"]
    return 1.0 / (1.0 - p) if a["dropout_implementation"] == "upscale_in_train" else 1.0


DROPOUT = {
    "Mask": Bernoulli(p=lambda a: 1.0 - a["dropout_prob"]),
    "Out / X": Categorical(values=lambda a: [0.0, _kept(a)],
                           probs=lambda a: [a["dropout_prob"], 1.0 - a["dropout_prob"]],
                           of=lambda o, i: o["Out"][i["X"] != 0] / i["X"][i["X"] != 0]),
}


class TestBrokenDropoutKeep(OpTest):
    """p 0.5: keep and drop probabilities are equal, so only another p shows the bug."""

    op = "broken_dropout_keep"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(36).uniform(0.5, 1.5, (16, 20))
        self.inputs = {"X": x}
        self.attrs = {"dropout_prob": 0.5, "seed": 9,
                      "dropout_implementation": "upscale_in_train"}
        self.outputs = {"Out": x, "Mask": np.ones(x.shape, dtype="uint8")}
        self.distribution = DROPOUT

    def test_check_output(self):
        self.check_output(no_check_set=["Out", "Mask"])

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodDropoutKeep(TestBrokenDropoutKeep):
    op = "good_dropout_keep"


class TestBrokenDropoutScale(TestBrokenDropoutKeep):
    op = "broken_dropout_scale"


class TestGoodDropoutScale(TestBrokenDropoutKeep):
    op = "good_dropout_scale"
