"""OpTests of the ops with wrong parallel signatures (sbp_breakers_op.py) and their twins."""
import numpy as np

from harness import OpTest


def _x(shape, seed=5):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class _Base:
    """The shared setUp (a mixin: not an OpTest itself, so not discovered as one)."""

    op = ""
    shape = (6, 5)
    attrs_ = {}

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x(self.shape)}
        self.attrs = dict(self.attrs_)
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestBrokenSbpSoftmax(_Base, OpTest):
    op = "broken_sbp_softmax"
    shape = (4, 5, 3)
    attrs_ = {"axis": 1}

    def reference(self, inputs, attrs):
        return {"Out": _softmax(inputs["X"], attrs.get("axis", -1))}


class TestGoodSbpSoftmax(TestBrokenSbpSoftmax):
    op = "good_sbp_softmax"


class TestBrokenSbpRowsum(_Base, OpTest):
    op = "broken_sbp_rowsum"

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"].sum(axis=1)}


class TestGoodSbpRowsum(TestBrokenSbpRowsum):
    op = "good_sbp_rowsum"


class TestBrokenSbpTranspose(_Base, OpTest):
    op = "broken_sbp_transpose"

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"].T.copy()}


class TestGoodSbpTranspose(TestBrokenSbpTranspose):
    op = "good_sbp_transpose"


class TestBrokenSbpRowmean(_Base, OpTest):
    op = "broken_sbp_rowmean"

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"].mean(axis=1)}


class TestGoodSbpRowmean(TestBrokenSbpRowmean):
    op = "good_sbp_rowmean"


class TestBrokenSbpBatchnorm(_Base, OpTest):
    op = "broken_sbp_batchnorm"

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] / inputs["X"].shape[0]}


class TestGoodSbpBatchnorm(TestBrokenSbpBatchnorm):
    op = "good_sbp_batchnorm"


class TestBrokenSbpAffine(_Base, OpTest):
    op = "broken_sbp_affine"

    def reference(self, inputs, attrs):
        return {"Out": 2 * inputs["X"] + 1}


class TestGoodSbpAffine(TestBrokenSbpAffine):
    op = "good_sbp_affine"
