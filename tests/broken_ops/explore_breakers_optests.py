"""OpTests of the explore breakers (explore_breakers_op.py) and their twins. Each writes
the case an author would write -- and that case passes the broken op: the bug is where the
case does not go. Not collected by `opkit test --tests tests/broken_ops` (no test_ prefix);
run with::

    opkit test --ops tests/broken_ops/explore_breakers_op.py \\
        --tests tests/broken_ops/explore_breakers_optests.py
"""
import numpy as np

from harness import OpTest


def _u(shape, lo=0.1, hi=1.0, seed=7):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


class _Case(OpTest):
    """setUp from `make()`: (inputs, attrs); outputs from `reference`."""

    op = ""
    grads = ()

    def setUp(self):
        self.op_type = self.op
        self.inputs, self.attrs = self.make()
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_output(self):
        self.check_output()


def _twin(cls, name):
    return type(name, (cls,), {"op": cls.op.replace("broken_", "good_")})


# -- NaN ---------------------------------------------------------------------------------------
class TestBrokenNanArgmax(_Case):
    op = "broken_nan_argmax"

    def make(self):
        return {"X": _u((3, 5))}, {"axis": 1}

    def reference(self, inputs, attrs):
        return {"Out": np.argmax(inputs["X"], axis=attrs.get("axis", -1)).astype(np.int64)}


class TestBrokenFmaxRowmax(_Case):
    op = "broken_fmax_rowmax"

    def make(self):
        return {"X": _u((4, 6), -1, 1)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.max(inputs["X"], axis=-1)}


class TestBrokenNanClip(_Case):
    op = "broken_nan_clip"

    def make(self):
        return {"X": _u((4, 5), -1, 1)}, {"min": -0.5, "max": 0.5}

    def reference(self, inputs, attrs):
        return {"Out": np.clip(inputs["X"], attrs.get("min", -0.5), attrs.get("max", 0.5))}


class TestBrokenNanSign(_Case):
    op = "broken_nan_sign"

    def make(self):
        return {"X": _u((3, 4), -1, 1)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.sign(inputs["X"])}


class TestBrokenInfLogsumexp(_Case):
    op = "broken_inf_logsumexp"

    def make(self):
        return {"X": _u((3, 4), -2, 2)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.logaddexp.reduce(inputs["X"], axis=-1)}


class TestBrokenIscloseNan(_Case):
    op = "broken_isclose_nan"

    def make(self):
        x = _u((3, 4))
        y = x.copy()
        y[0] += 1e-3
        return {"X": x, "Y": y}, {"rtol": 1e-5, "atol": 1e-8, "equal_nan": False}

    def reference(self, inputs, attrs):
        return {"Out": np.isclose(inputs["X"], inputs["Y"], rtol=attrs.get("rtol", 1e-5),
                                  atol=attrs.get("atol", 1e-8),
                                  equal_nan=attrs.get("equal_nan", False))}


# -- negatives ---------------------------------------------------------------------------------
class TestBrokenZeroPadMaxpool(_Case):
    op = "broken_zero_pad_maxpool"

    def make(self):
        return {"X": _u((2, 3, 8))}, {"ksize": 3, "strides": 1, "paddings": 1}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        k, s, p = attrs.get("ksize", 3), attrs.get("strides", 1), attrs.get("paddings", 1)
        if x.ndim != 3:
            raise ValueError("X must be [N, C, L]")
        xp = np.pad(x, [(0, 0), (0, 0), (p, p)], constant_values=-np.inf)
        n = (x.shape[2] + 2 * p - k) // s + 1
        if n <= 0:
            raise ValueError("the window does not fit")
        return {"Out": np.stack([xp[:, :, i * s:i * s + k].max(axis=2) for i in range(n)],
                                axis=2)}


class TestBrokenZeroInitSegmax(_Case):
    op = "broken_zero_init_segmax"

    def make(self):
        return {"X": _u((6, 3))}, {"segments": 2}

    def reference(self, inputs, attrs):
        x, seg = inputs["X"], attrs.get("segments", 2)
        if x.ndim < 1 or x.shape[0] % seg or x.shape[0] == 0:
            raise ValueError("rows do not split")
        return {"Out": x.reshape((seg, -1) + x.shape[1:]).max(axis=1)}


class TestBrokenFmodMod(_Case):
    op = "broken_fmod_mod"

    def make(self):
        return {"X": _u((3, 4), 1, 9), "Y": _u((3, 4), 1, 3, seed=8)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.mod(inputs["X"], inputs["Y"])}


class TestBrokenTruncFloordiv(_Case):
    op = "broken_trunc_floordiv"

    def make(self):
        rng = np.random.default_rng(3)
        return {"X": rng.integers(1, 50, (3, 4)), "Y": rng.integers(1, 7, (3, 4))}, {}

    def reference(self, inputs, attrs):
        if (inputs["Y"] == 0).any():
            raise ZeroDivisionError("floor_divide by zero")
        return {"Out": np.floor_divide(inputs["X"], inputs["Y"])}


class TestBrokenFloorCast(_Case):
    op = "broken_floor_cast"

    def make(self):
        return {"X": _u((3, 4), 0, 9)}, {"out_dtype": "int32"}

    def reference(self, inputs, attrs):
        with np.errstate(all="ignore"):
            return {"Out": inputs["X"].astype(attrs.get("out_dtype", "int32"))}


class TestBrokenNegPow(_Case):
    op = "broken_neg_pow"

    def make(self):
        return {"X": _u((3, 4), 0.5, 2)}, {"factor": 3.0}

    def reference(self, inputs, attrs):
        with np.errstate(all="ignore"):
            return {"Out": np.power(inputs["X"], attrs.get("factor", 3.0))}


# -- halves, ties --------------------------------------------------------------------------------
class TestBrokenEvenRound(_Case):
    op = "broken_even_round"

    def make(self):
        return {"X": _u((3, 4), -3, 3)}, {}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        return {"Out": np.sign(x) * np.floor(np.abs(x) + 0.5)}


class TestBrokenLastTieArgmin(_Case):
    op = "broken_last_tie_argmin"

    def make(self):
        return {"X": _u((3, 6), -1, 1)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.argmin(inputs["X"], axis=-1).astype(np.int64)}


# -- attr values ---------------------------------------------------------------------------------
class TestBrokenLeakyMax(_Case):
    op = "broken_leaky_max"

    def make(self):
        return {"X": _u((3, 4), -1, 1)}, {"alpha": 0.02}

    def reference(self, inputs, attrs):
        x, a = inputs["X"], attrs.get("alpha", 0.02)
        return {"Out": np.where(x >= 0, x, a * x)}


class TestBrokenRollShift(_Case):
    op = "broken_roll_shift"

    def make(self):
        return {"X": _u((5, 3))}, {"shift": 1}

    def reference(self, inputs, attrs):
        return {"Out": np.roll(inputs["X"], attrs.get("shift", 1), axis=0)}


class TestBrokenAsymPad(_Case):
    op = "broken_asym_pad"

    def make(self):
        return {"X": _u((3, 4))}, {"paddings": [1, 1], "value": 0.0}

    def reference(self, inputs, attrs):
        x, p = inputs["X"], attrs.get("paddings", [1, 1])
        if len(p) != 2 or min(p) < 0:
            raise ValueError("paddings must be [before, after] >= 0")
        return {"Out": np.pad(x, [(0, 0)] * (x.ndim - 1) + [tuple(p)],
                              constant_values=attrs.get("value", 0.0))}


class TestBrokenCumsumFlags(_Case):
    op = "broken_cumsum_flags"

    def make(self):
        return {"X": _u((5, 2))}, {"exclusive": False, "reverse": False}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        if x.ndim == 0:
            return {"Out": x * 0 if attrs.get("exclusive") else x.copy()}
        y = x[::-1] if attrs.get("reverse") else x
        c = np.cumsum(y, axis=0)
        if attrs.get("exclusive"):
            c = c - y
        return {"Out": c[::-1] if attrs.get("reverse") else c}


class TestBrokenNhwcBias(_Case):
    op = "broken_nhwc_bias"

    def make(self):
        return {"X": _u((2, 3, 4, 3)), "Bias": np.array([0.5, -1.0, 2.0])}, \
            {"data_format": "NCHW"}

    def reference(self, inputs, attrs):
        x, b = inputs["X"], inputs["Bias"]
        shape = (1, 1, 1, -1) if attrs.get("data_format", "NCHW") == "NHWC" else (1, -1, 1, 1)
        return {"Out": x + b.reshape(shape)}


# -- axes order, other ranks, 0-D ------------------------------------------------------------------
class TestBrokenSortedAxesSum(_Case):
    op = "broken_sorted_axes_sum"

    def make(self):
        return {"X": _u((2, 3, 4))}, {"dim": [0, 2]}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        dims = tuple(int(d) % max(x.ndim, 1) for d in attrs.get("dim", [0]))
        return {"Out": x.sum(axis=dims)}


class TestBrokenRank2Rowsum(_Case):
    op = "broken_rank2_rowsum"

    def make(self):
        return {"X": _u((3, 4))}, {}

    def reference(self, inputs, attrs):
        if inputs["X"].ndim < 1:
            raise ValueError("X must have a dimension")
        return {"Out": inputs["X"].sum(axis=-1)}


class TestBrokenSoftmax0d(_Case):
    op = "broken_0d_softmax"

    def make(self):
        return {"X": _u((3, 4), -1, 1)}, {}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        if x.ndim == 0:
            return {"Out": np.ones_like(x)}
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return {"Out": e / e.sum(axis=-1, keepdims=True)}


# -- integer extremes ------------------------------------------------------------------------------
class TestBrokenWrapEmbedding(_Case):
    op = "broken_wrap_embedding"

    def make(self):
        return {"W": _u((6, 3)), "Ids": np.array([[0], [2], [5], [1]], dtype=np.int64)}, {}

    def reference(self, inputs, attrs):
        w, ids = inputs["W"], inputs["Ids"].reshape(-1)
        if ((ids < 0) | (ids >= w.shape[0])).any():
            raise IndexError("an id outside the table")
        return {"Out": w[ids]}


class TestBrokenOnehotWrap(_Case):
    op = "broken_onehot_wrap"

    def make(self):
        return {"X": np.array([[0], [3], [1]], dtype=np.int64)}, {"depth": 4}

    def reference(self, inputs, attrs):
        ids, depth = inputs["X"], attrs.get("depth", 4)
        if ((ids < 0) | (ids >= depth)).any():
            raise IndexError("an id outside [0, depth)")
        return {"Out": np.eye(depth)[ids.reshape(-1)].reshape(ids.shape + (depth,))}


# -- permutations (gradients) ----------------------------------------------------------------------
class TestBrokenPermTranspose(_Case):
    op = "broken_perm_transpose"

    def make(self):
        return {"X": _u((2, 3, 4))}, {"perm": [0, 2, 1]}

    def reference(self, inputs, attrs):
        return {"Out": np.transpose(inputs["X"], attrs.get("perm"))}

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestBrokenLogabsProd(_Case):
    op = "broken_logabs_prod"

    def make(self):
        return {"X": _u((3, 4), 0.5, 1.5)}, {}

    def reference(self, inputs, attrs):
        if inputs["X"].ndim < 1:
            raise ValueError("X must have a dimension")
        return {"Out": np.prod(inputs["X"], axis=-1)}

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestBrokenMaskedMean(_Case):
    op = "broken_masked_mean"

    def make(self):
        mask = np.array([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 1, 1]], dtype=bool)
        return {"X": _u((3, 4)), "Mask": mask}, {}

    def reference(self, inputs, attrs):
        x, m = inputs["X"], inputs["Mask"]
        n = m.sum(axis=-1)
        with np.errstate(all="ignore"):
            return {"Out": np.where(n > 0, (x * m).sum(axis=-1) / np.maximum(n, 1), 0.0)}


BROKEN = [cls for name, cls in list(globals().items()) if name.startswith("TestBroken")]
for _cls in BROKEN:
    _name = _cls.__name__.replace("TestBroken", "TestGood")
    globals()[_name] = _twin(_cls, _name)
