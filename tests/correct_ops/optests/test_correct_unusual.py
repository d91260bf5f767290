"""The first OpTest an author would write for each op of tests/correct_ops: one ordinary
case, a reference written for the values the test uses (some naive about NaN, as authors'
references are)."""
import numpy as np

from harness import OpTest
from harness.judging.distributions import Bernoulli, Exponential

R = np.random.default_rng


class _Case:
    """The shared setUp and test methods (a mixin: not an OpTest itself)."""

    grads = ()            # the inputs check_grad differentiates
    outs = "Out"          # the output(s) it differentiates
    no_check = ()         # outputs check_output leaves out (random ones)

    def setUp(self):
        self.op_type = self.op
        self.inputs, self.attrs = self.make()
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_output(self):
        self.check_output(no_check_set=list(self.no_check) or None)

    def test_check_grad(self):
        if self.grads:
            self.check_grad(list(self.grads), self.outs)


class TestBnRunningStats(_Case, OpTest):
    op, grads, outs = "bn_running_stats", ["X"], "Y"

    def make(self):
        r = R(1)
        return {"X": r.uniform(-1, 1, (6, 3)), "Mean": r.uniform(-1, 1, 3),
                "Variance": r.uniform(0.5, 1.5, 3)}, {"momentum": 0.9, "epsilon": 1e-5}

    def reference(self, ins, a):
        x = ins["X"]
        m, v = x.mean(0), x.var(0)
        inv = 1 / np.sqrt(v + a["epsilon"])
        return {"Y": (x - m) * inv, "MeanOut": ins["Mean"] * 0.9 + m * 0.1,
                "VarianceOut": ins["Variance"] * 0.9 + v * 0.1, "SavedMean": m,
                "SavedInvStd": inv}


class TestSoftmaxXent(_Case, OpTest):
    op, grads, outs = "softmax_xent", ["Logits"], "Loss"

    def make(self):
        r = R(2)
        return {"Logits": r.uniform(-2, 2, (4, 5)),
                "Label": r.integers(0, 5, (4, 1)).astype(np.int64)}, {}

    def reference(self, ins, a):
        x = ins["Logits"]
        s = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
        return {"Softmax": s, "Loss": -np.log(np.take_along_axis(s, ins["Label"], -1))}


class TestLayerNormStats(_Case, OpTest):
    op, grads, outs = "layer_norm_stats", ["X"], "Y"

    def make(self):
        return {"X": R(3).uniform(-1, 1, (3, 6))}, {"epsilon": 1e-5}

    def reference(self, ins, a):
        x = ins["X"]
        m, v = x.mean(-1), x.var(-1)
        return {"Y": (x - m[:, None]) / np.sqrt(v[:, None] + a["epsilon"]), "Mean": m,
                "Variance": v}


class TestHashedEmbedding(_Case, OpTest):
    op, grads = "hashed_embedding", ["W"]

    def make(self):
        r = R(4)
        return {"W": r.uniform(-1, 1, (7, 3)),
                "Ids": r.integers(0, 1000, (5, 1)).astype(np.int64)}, {}

    def reference(self, ins, a):
        w = ins["W"]
        return {"Out": w[(ins["Ids"][:, 0] * 2654435761) % w.shape[0]]}


class TestRmspropLite(_Case, OpTest):
    op = "rmsprop_lite"

    def make(self):
        r = R(5)
        return {"Param": r.uniform(-1, 1, (4, 3)), "Grad": r.uniform(-1, 1, (4, 3)),
                "MeanSquare": r.uniform(0.1, 1, (4, 3))}, {"decay": 0.9, "lr": 0.01,
                                                           "epsilon": 1e-6}

    def reference(self, ins, a):
        ms = a["decay"] * ins["MeanSquare"] + (1 - a["decay"]) * ins["Grad"] ** 2
        return {"ParamOut": ins["Param"] - a["lr"] * ins["Grad"] / (np.sqrt(ms) + a["epsilon"]),
                "MeanSquareOut": ms}


class TestAdagradLite(_Case, OpTest):
    op = "adagrad_lite"

    def make(self):
        r = R(6)
        return {"Param": r.uniform(-1, 1, (4, 3)), "Grad": r.uniform(-1, 1, (4, 3)),
                "Moment": r.uniform(0.1, 1, (4, 3))}, {"lr": 0.01, "epsilon": 1e-6}

    def reference(self, ins, a):
        m = ins["Moment"] + ins["Grad"] ** 2
        return {"ParamOut": ins["Param"] - a["lr"] * ins["Grad"] / (np.sqrt(m) + a["epsilon"]),
                "MomentOut": m}


class TestExclusiveCumsum(_Case, OpTest):
    op, grads = "exclusive_cumsum", ["X"]

    def make(self):
        return {"X": R(7).uniform(-1, 1, (3, 5))}, {}

    def reference(self, ins, a):
        return {"Out": np.cumsum(ins["X"], axis=1) - ins["X"]}     # naive about NaN


class TestSortDescending(_Case, OpTest):
    op, grads = "sort_descending", ["X"]

    def make(self):
        return {"X": R(8).permutation(12).reshape(3, 4).astype(np.float64) / 7}, {}

    def reference(self, ins, a):
        x = ins["X"]
        key = np.where(np.isnan(x), -np.inf, -x)   # NaN first, where the kernel puts it last
        idx = np.argsort(key, -1, kind="stable")
        return {"Out": np.take_along_axis(x, idx, -1), "Indices": idx.astype(np.int64)}


class TestDropoutUpscale(_Case, OpTest):
    op, no_check, grads = "dropout_upscale", ("Out", "Mask"), ["X"]

    def make(self):
        return {"X": np.ones((40, 50))}, {"dropout_prob": 0.3, "fix_seed": True, "seed": 3}

    def reference(self, ins, a):
        return {"Out": ins["X"], "Mask": np.ones(ins["X"].shape, np.uint8)}


class TestFeatureDropout(TestDropoutUpscale):
    op = "feature_dropout"


class TestLogClamp(_Case, OpTest):
    op, grads = "log_clamp", ["X"]

    def make(self):
        return {"X": R(9).uniform(0.1, 2, (3, 4))}, {"epsilon": 1e-7}

    def reference(self, ins, a):
        return {"Out": np.log(np.maximum(ins["X"], a["epsilon"]))}


class TestRsqrtEps(_Case, OpTest):
    op, grads = "rsqrt_eps", ["X"]

    def make(self):
        return {"X": R(10).uniform(0.5, 2, (3, 4))}, {"epsilon": 1e-12}

    def reference(self, ins, a):
        return {"Out": 1 / np.sqrt(ins["X"] ** 2 + a["epsilon"])}


class TestL2Normalize(_Case, OpTest):
    op, grads = "l2_normalize", ["X"]

    def make(self):
        return {"X": R(11).uniform(-1, 1, (3, 4))}, {"epsilon": 1e-12}

    def reference(self, ins, a):
        n = np.sqrt((ins["X"] ** 2).sum(-1, keepdims=True))
        return {"Out": ins["X"] / np.maximum(n, a["epsilon"]), "Norm": n}


class TestAvgPoolRows(_Case, OpTest):
    op, grads = "avg_pool_rows", ["X"]

    def make(self):
        return {"X": R(12).uniform(-1, 1, (2, 6))}, {"ksize": 2}

    def reference(self, ins, a):
        x, k = ins["X"], a["ksize"]
        w = np.zeros((x.shape[1], x.shape[1] // k))
        for j in range(x.shape[1] // k):
            w[j * k:(j + 1) * k, j] = 1.0 / k
        return {"Out": x @ w}                      # a NaN reaches every window of its row


class TestArgmaxRows(_Case, OpTest):
    op = "argmax_rows"

    def make(self):
        return {"X": R(13).permutation(12).reshape(3, 4).astype(np.float64)}, {}

    def reference(self, ins, a):
        return {"Out": ins["X"].argmax(-1)[:, None].astype(np.int64)}


class TestHashBucket(_Case, OpTest):
    op = "hash_bucket"

    def make(self):
        return {"X": R(14).uniform(-1, 1, (3, 4))}, {"num_buckets": 97}

    def reference(self, ins, a):
        k = np.abs(np.round(ins["X"] * 1000)).astype(np.int64)
        return {"Out": (k * 2654435761) % a["num_buckets"]}


class TestTopkRows(_Case, OpTest):
    op, grads = "topk_rows", ["X"]

    def make(self):
        return {"X": R(15).permutation(15).reshape(3, 5).astype(np.float64) / 3}, {"k": 2}

    def reference(self, ins, a):
        idx = np.argsort(-ins["X"], -1)[:, :a["k"]]
        return {"Out": np.take_along_axis(ins["X"], idx, -1), "Indices": idx.astype(np.int64)}


class TestAminmax(_Case, OpTest):
    op = "aminmax"

    def make(self):
        return {"X": R(16).uniform(-1, 1, (3, 4))}, {}

    def reference(self, ins, a):
        return {"Min": ins["X"].min(-1, keepdims=True), "Max": ins["X"].max(-1, keepdims=True)}


class TestLabelSmooth(_Case, OpTest):
    op, grads = "label_smooth_lite", ["X"]

    def make(self):
        return {"X": np.eye(4)[R(17).integers(0, 4, 5)]}, {"epsilon": 0.1}

    def reference(self, ins, a):
        return {"Out": 0.9 * ins["X"] + 0.1 / ins["X"].shape[-1]}


class TestStepCounter(_Case, OpTest):
    op = "step_counter"

    def make(self):
        return {"Step": np.array([3.0])}, {"step": 1.0}

    def reference(self, ins, a):
        return {"StepOut": ins["Step"] + a["step"]}


class TestEmaUpdate(_Case, OpTest):
    op = "ema_update"

    def make(self):
        r = R(18)
        return {"Param": r.uniform(-1, 1, (3, 4)), "Ema": r.uniform(-1, 1, (3, 4))}, \
            {"decay": 0.99}

    def reference(self, ins, a):
        return {"EmaOut": 0.99 * ins["Ema"] + 0.01 * ins["Param"]}


class TestHuberLoss(_Case, OpTest):
    op, grads = "huber_loss_lite", ["X", "Y"]

    def make(self):
        r = R(19)
        x = r.uniform(-2, 2, (4, 3))
        y = x + r.choice([-1.6, -0.4, 0.4, 1.6], (4, 3))
        return {"X": x, "Y": y}, {"delta": 1.0}

    def reference(self, ins, a):
        r = ins["Y"] - ins["X"]
        return {"Out": np.where(np.abs(r) <= 1, 0.5 * r * r, np.abs(r) - 0.5), "Residual": r}


class TestAcosh(_Case, OpTest):
    op, grads = "acosh_lite", ["X"]

    def make(self):
        return {"X": R(20).uniform(1.5, 3, (3, 4))}, {}

    def reference(self, ins, a):
        return {"Out": np.log(ins["X"] + np.sqrt(ins["X"] ** 2 - 1))}


class TestSqrt(_Case, OpTest):
    op, grads = "sqrt_lite", ["X"]

    def make(self):
        return {"X": R(21).uniform(0.5, 3, (3, 4))}, {}

    def reference(self, ins, a):
        return {"Out": np.sqrt(ins["X"])}


class TestNanToNum(_Case, OpTest):
    op, grads = "nan_to_num", ["X"]

    def make(self):
        return {"X": R(22).uniform(-1, 1, (3, 4))}, {}

    def reference(self, ins, a):
        return {"Out": np.nan_to_num(ins["X"], nan=0.0)}


class TestSigmoidXent(_Case, OpTest):
    op, grads = "sigmoid_xent", ["X"]

    def make(self):
        r = R(23)
        return {"X": r.uniform(-2, 2, (4, 3)),
                "Label": r.integers(0, 2, (4, 3)).astype(np.float64)}, {"ignore_index": -100}

    def reference(self, ins, a):
        x, y = ins["X"], ins["Label"]
        p = 1 / (1 + np.exp(-x))
        return {"Out": -(y * np.log(p) + (1 - y) * np.log(1 - p))}


class TestBernoulli(_Case, OpTest):
    op, no_check = "bernoulli_lite", ("Out",)
    distribution = {"Out": Bernoulli(p=0.3)}

    def make(self):
        return {"X": np.full((40, 50), 0.3)}, {"seed": 1, "fix_seed": True}

    def reference(self, ins, a):
        return {"Out": np.zeros_like(ins["X"])}


class TestExponential(_Case, OpTest):
    op, no_check = "exponential_lite", ("Out",)
    distribution = {"Out": Exponential(rate="lam")}

    def make(self):
        return {"X": np.zeros((40, 50))}, {"lam": 2.0, "seed": 1, "fix_seed": True}

    def reference(self, ins, a):
        return {"Out": np.zeros_like(ins["X"])}


class TestRandintLike(_Case, OpTest):
    op, no_check = "randint_like", ("Out",)

    def make(self):
        return {"X": np.zeros((40, 50))}, {"low": 0, "high": 10, "seed": 1, "fix_seed": True}

    def reference(self, ins, a):
        return {"Out": np.zeros(ins["X"].shape, np.int64)}


class TestSmoothL1(_Case, OpTest):
    op, grads = "smooth_l1_lite", ["X", "Y"]

    def make(self):
        r = R(24)
        x = r.uniform(-2, 2, (4, 3))
        return {"X": x, "Y": x + r.choice([-1.6, -0.4, 0.4, 1.6], (4, 3))}, {"sigma": 1.0}

    def reference(self, ins, a):
        d = ins["X"] - ins["Y"]
        return {"Out": np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5), "Diff": d}


class TestLogSoftmax(_Case, OpTest):
    op, grads = "log_softmax_lite", ["X"]

    def make(self):
        return {"X": R(25).uniform(-2, 2, (3, 5))}, {}

    def reference(self, ins, a):
        e = np.exp(ins["X"])
        return {"Out": np.log(e / e.sum(-1, keepdims=True))}


class TestMaskedFill(_Case, OpTest):
    op, grads = "masked_fill_lite", ["X"]

    def make(self):
        r = R(26)
        return {"X": r.uniform(-1, 1, (3, 4)),
                "Mask": r.integers(0, 2, (3, 4)).astype(np.float64)}, {"value": 0.0}

    def reference(self, ins, a):
        return {"Out": np.where(ins["Mask"] > 0, a["value"], ins["X"])}


class TestLengthMask(_Case, OpTest):
    op = "length_mask"

    def make(self):
        return {"Length": np.array([1, 4, 6], np.int64)}, {"maxlen": 6}

    def reference(self, ins, a):
        return {"Out": (np.arange(6)[None, :] < ins["Length"][:, None]).astype(np.float32)}


class TestCumprodRows(_Case, OpTest):
    op, grads = "cumprod_rows", ["X"]

    def make(self):
        return {"X": R(27).uniform(0.5, 1.5, (3, 4))}, {}

    def reference(self, ins, a):
        return {"Out": np.cumprod(ins["X"], axis=1)}


class TestSoftplusTh(_Case, OpTest):
    op, grads = "softplus_th", ["X"]

    def make(self):
        return {"X": R(28).uniform(-3, 3, (3, 4))}, {"beta": 1.0, "threshold": 20.0}

    def reference(self, ins, a):
        return {"Out": np.log1p(np.exp(ins["X"]))}


class TestRowGather(_Case, OpTest):
    op, grads = "row_gather", ["W"]

    def make(self):
        r = R(29)
        return {"W": r.uniform(-1, 1, (6, 3)),
                "Index": r.integers(0, 6, (4, 1)).astype(np.int64)}, {}

    def reference(self, ins, a):
        return {"Out": ins["W"][ins["Index"][:, 0]]}
