"""The author's first OpTests of the tracker set (tracker_ops.py): each is the case an author
would write, and each passes the broken op in the checks that existed before issue 36. Each
`TestBrokenX` has a twin `TestGoodX` (same case, the good op). Run with::

    opkit test --ops tests/tracker_set/tracker_ops.py --tests tests/tracker_set/tracker_optests.py

or `python tests/tracker_set/catch_rate.py` for the catch rate.
"""
import numpy as np

from harness import OpTest


def _u(shape, lo=0.1, hi=1.0, seed=11):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


class _Case(OpTest):
    """setUp from `make()` -> (inputs, attrs); expected outputs from `reference`."""

    op = ""
    grad = None           # (inputs to check, output) for test_check_grad
    no_check = ()

    def setUp(self):
        if not self.op:
            return          # the base class: nothing to set up
        self.op_type = self.op
        self.inputs, self.attrs = self.make()
        self.outputs = self.reference(self.inputs, self.attrs)


class _GradCase(_Case):
    """A case whose test also checks gradients (`grad`: inputs, output)."""


def _check_output(self):
    self.check_output()


def _check_grad(self):
    self.check_grad(*self.grad)


def _x(inputs, name="X"):
    v = inputs[name]
    return v[0] if isinstance(v, tuple) else v


# -- law 1 -----------------------------------------------------------------------------------
class TestBrokenArgmaxDtype(_Case):
    op = "broken_argmax_dtype"

    def make(self):
        return {"X": _u((3, 5))}, {"axis": 1}

    def reference(self, inputs, attrs):
        return {"Out": np.argmax(_x(inputs), axis=attrs.get("axis", -1)).astype(np.int64)}


class TestBrokenIsfiniteDtype(_Case):
    op = "broken_isfinite_dtype"

    def make(self):
        return {"X": _u((4, 3), -1, 1)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.isfinite(_x(inputs))}


class TestBrokenCastDtype(_Case):
    op = "broken_cast_dtype"

    def make(self):
        return {"X": _u((3, 4), -2, 2)}, {"out_dtype": "int64"}

    def reference(self, inputs, attrs):
        return {"Out": _x(inputs).astype(attrs.get("out_dtype", "float64"))}


class TestBrokenKeepdimSum(_Case):
    op = "broken_keepdim_sum"

    def make(self):
        return {"X": _u((3, 4), -1, 1)}, {"dim": 1, "keep_dim": False}

    def reference(self, inputs, attrs):
        return {"Out": np.sum(_x(inputs), axis=attrs.get("dim", -1),
                              keepdims=attrs.get("keep_dim", False))}


# -- law 3 -----------------------------------------------------------------------------------
class TestBrokenBiasGrad(_GradCase):
    op = "broken_bias_grad"
    grad = (["X"], "Out")

    def make(self):
        return {"X": _u((4, 3), -1, 1), "Bias": _u((3,), -1, 1, seed=5)}, {}

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] * 2.0 + inputs["Bias"]}


class TestBrokenNogradScale(_GradCase):
    op = "broken_nograd_scale"
    grad = (["X"], "Out")

    def make(self):
        return {"X": _u((3, 4), -1, 1), "Scale": np.array([1.5])}, {}

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] * inputs["Scale"]}


class TestBrokenPoolMask(_Case):
    op = "broken_pool_mask"

    def make(self):
        return {"X": _u((3, 6), -1, 1)}, {}

    def reference(self, inputs, attrs):
        x = _x(inputs)
        n, w = x.shape
        win = x[:, : w // 2 * 2].reshape(n, w // 2, 2)
        return {"Out": win.max(axis=2), "Mask": np.argmax(win, axis=2).astype(np.int64)}


# -- law 5 -----------------------------------------------------------------------------------
class TestBrokenReduceMode(_Case):
    op = "broken_reduce_mode"

    def make(self):
        return {"X": _u((3, 4), -1, 1)}, {"reduction": "sum"}

    def reference(self, inputs, attrs):
        x = _x(inputs)
        return {"Out": x.sum(axis=-1) if attrs.get("reduction", "mean") == "sum"
                else x.mean(axis=-1)}


class TestBrokenPadMode(_Case):
    op = "broken_pad_mode"

    def make(self):
        return {"X": _u((3, 4), -1, 1)}, {"mode": "reflect"}

    def reference(self, inputs, attrs):
        x = _x(inputs)
        return {"Out": np.pad(x, [(0, 0), (1, 1)], mode=attrs.get("mode", "constant"))}


class TestBrokenFillInt64(_Case):
    op = "broken_fill_int64"

    def make(self):
        return {"X": _u((2, 3))}, {"value": 3}

    def reference(self, inputs, attrs):
        return {"Out": np.full(_x(inputs).shape, attrs.get("value", 0), dtype=np.int64)}


class TestBrokenRangeInt64(_Case):
    op = "broken_range_int64"

    def make(self):
        return {"X": _u((2, 5))}, {"start": 0, "step": 1}

    def reference(self, inputs, attrs):
        n = _x(inputs).shape[-1]
        return {"Out": attrs.get("start", 0) + attrs.get("step", 1) * np.arange(n, dtype=np.int64)}


# -- law 2 -----------------------------------------------------------------------------------
class TestBrokenSquarePool(_GradCase):
    op = "broken_square_pool"
    grad = (["X"], "Out")

    def make(self):
        return {"X": _u((2, 2, 4, 4), -1, 1)}, {}

    def reference(self, inputs, attrs):
        x = _x(inputs)
        n, c, h, w = x.shape
        return {"Out": x[:, :, :h // 2 * 2, :w // 2 * 2]
                .reshape(n, c, h // 2, 2, w // 2, 2).mean(axis=(3, 5))}


class TestBrokenFlattenDims(_GradCase):
    op = "broken_flatten_dims"
    grad = (["X"], "Out")

    def make(self):
        return {"X": _u((2, 3, 3), -1, 1)}, {}

    def reference(self, inputs, attrs):
        x = _x(inputs)
        return {"Out": x.reshape(x.shape[0], -1)}


class TestBrokenScatterAdd(_GradCase):
    op = "broken_scatter_add"
    grad = (["X", "Updates"], "Out")

    def make(self):
        return {"X": _u((5, 3), -1, 1), "Ids": np.array([0, 2, 4], dtype=np.int64),
                "Updates": _u((3, 3), -1, 1, seed=3)}, {}

    def reference(self, inputs, attrs):
        out = inputs["X"].copy()
        np.add.at(out, inputs["Ids"], inputs["Updates"])
        return {"Out": out}


class TestBrokenEmbeddingGrad(_GradCase):
    op = "broken_embedding_grad"
    grad = (["W"], "Out")

    def make(self):
        return {"W": _u((6, 3), -1, 1), "Ids": np.array([1, 3, 4, 0], dtype=np.int64)}, {}

    def reference(self, inputs, attrs):
        return {"Out": inputs["W"][inputs["Ids"]]}


class TestBrokenSegmentSum(_Case):
    op = "broken_segment_sum"

    def make(self):
        return {"X": _u((6, 2), -1, 1), "Ids": np.array([0, 0, 1, 2, 2, 2], dtype=np.int64)}, \
            {"num_segments": 3}

    def reference(self, inputs, attrs):
        x, ids = inputs["X"], inputs["Ids"]
        out = np.zeros((attrs.get("num_segments", 1),) + x.shape[1:], x.dtype)
        np.add.at(out, ids, x)
        return {"Out": out}


class TestBrokenSoftlabelCe(_GradCase):
    op = "broken_softlabel_ce"
    grad = (["X"], "Out")

    def make(self):
        lab = _u((4, 5), seed=2)
        return {"X": _u((4, 5), -1, 1), "Label": lab / lab.sum(axis=1, keepdims=True)}, {}

    def reference(self, inputs, attrs):
        x, lab = inputs["X"], inputs["Label"]
        m = x.max(axis=1, keepdims=True)
        logp = x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
        return {"Out": -(lab * logp).sum(axis=1, keepdims=True)}


class TestBrokenBlockedCumsum(_GradCase):
    op = "broken_blocked_cumsum"
    grad = (["X"], "Out")

    def make(self):
        return {"X": _u((2, 40), -1, 1)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.cumsum(_x(inputs), axis=-1)}


class TestBrokenChunkedSoftmax(_Case):
    op = "broken_chunked_softmax"

    def make(self):
        return {"X": _u((3, 10), -1, 1)}, {}

    def reference(self, inputs, attrs):
        x = _x(inputs)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return {"Out": e / e.sum(axis=-1, keepdims=True)}


# -- law 4 -----------------------------------------------------------------------------------
class TestBrokenPermSum(_Case):
    op = "broken_perm_sum"

    def make(self):
        return {"X": _u((3, 5), -1, 1)}, {}

    def reference(self, inputs, attrs):
        return {"Out": _x(inputs).sum(axis=-1)}


class TestBrokenSeterrLog(_GradCase):
    op = "broken_seterr_log"
    grad = (["X"], "Out")

    def make(self):
        return {"X": _u((3, 4), 0.5, 2)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.log(_x(inputs))}


class TestBrokenWarnFilter(_GradCase):
    op = "broken_warn_filter"
    grad = (["X"], "Out")

    def make(self):
        return {"X": _u((3, 4), 0.5, 2)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.sqrt(_x(inputs))}


class TestBrokenLeakCache(_GradCase):
    op = "broken_leak_cache"
    grad = (["X"], "Out")

    def make(self):
        return {"X": _u((3, 4), -1, 1)}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.tanh(_x(inputs))}


class TestBrokenEnvGram(_Case):
    op = "broken_env_gram"

    def make(self):
        return {"X": _u((3, 4), -1, 1)}, {}

    def reference(self, inputs, attrs):
        x = _x(inputs)
        return {"Out": x @ x.T}


def _twins():
    """Test methods on each concrete class (a base with its own would be collected), and
    each TestBrokenX's twin TestGoodX."""
    made = {}
    for name, cls in list(globals().items()):
        if name.startswith("TestBroken") and isinstance(cls, type):
            cls.test_check_output = _check_output
            if issubclass(cls, _GradCase):
                cls.test_check_grad = _check_grad
            twin = name.replace("TestBroken", "TestGood")
            made[twin] = type(twin, (cls,), {"op": cls.op.replace("broken_", "good_")})
    globals().update(made)


_twins()
