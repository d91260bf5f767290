"""OpTests of the law breakers (law_breakers_op.py): the cases an author writes."""
import numpy as np

from harness import OpTest


def _u(shape, lo=-1.0, hi=1.0, seed=23):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


class _Case(OpTest):
    """setUp from make() and reference(); the test methods are added to each concrete class
    at the end of the module (a base with test methods of its own would be collected)."""

    op = ""

    def setUp(self):
        if not self.op:
            return          # the base class: nothing to set up
        self.op_type = self.op
        self.inputs, self.attrs = self.make()
        self.outputs = self.reference(self.inputs, self.attrs)


def _check_output(self):
    self.check_output()


class TestBrokenLawArgmax(_Case):
    op = "broken_law_argmax"

    def make(self):
        return {"X": _u((3, 5))}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.argmax(inputs["X"], axis=-1).astype(np.int64)}


class TestBrokenLawBias(_Case):
    op = "broken_law_bias"

    def make(self):
        return {"X": _u((4, 3)), "Bias": _u((3,), seed=5)}, {}

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] * 2.0 + inputs["Bias"]}

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestBrokenLawMask(_Case):
    op = "broken_law_mask"

    def make(self):
        return {"X": _u((3, 6))}, {}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        win = x[:, : x.shape[1] // 2 * 2].reshape(x.shape[0], -1, 2)
        return {"Out": win.max(axis=2), "Indices": np.argmax(win, axis=2).astype(np.int64)}


class TestBrokenLawMode(_Case):
    op = "broken_law_mode"

    def make(self):
        return {"X": _u((3, 4))}, {"reduction": "sum"}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        return {"Out": x.sum(axis=-1) if attrs.get("reduction", "mean") == "sum"
                else x.mean(axis=-1)}


class TestBrokenLawFill(_Case):
    op = "broken_law_fill"

    def make(self):
        return {"X": _u((2, 3))}, {"value": 7}

    def reference(self, inputs, attrs):
        return {"Out": np.full(inputs["X"].shape, attrs.get("value", 0), dtype=np.int64)}


class TestBrokenLawPool(_Case):
    op = "broken_law_pool"

    def make(self):
        return {"X": _u((2, 2, 4, 4))}, {}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        n, c, h, w = x.shape
        return {"Out": x[:, :, :h // 2 * 2, :w // 2 * 2]
                .reshape(n, c, h // 2, 2, w // 2, 2).mean(axis=(3, 5))}


class TestBrokenLawPerm(_Case):
    op = "broken_law_perm"

    def make(self):
        return {"X": _u((3, 5))}, {}

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"].sum(axis=-1)}


class TestBrokenLawCumsum(_Case):
    op = "broken_law_cumsum"

    def make(self):
        return {"X": _u((16, 2048))}, {}

    def reference(self, inputs, attrs):
        return {"Out": np.cumsum(inputs["X"], axis=0)}


for _name, _cls in list(globals().items()):
    if _name.startswith("TestBroken"):
        _cls.test_check_output = _check_output
        _twin = _name.replace("TestBroken", "TestGood")
        globals()[_twin] = type(_twin, (_cls,), {"op": _cls.op.replace("broken_", "good_")})
