import numpy as np
from harness import OpTest


class _Unary:
    """Shared setUp (a mixin: not an OpTest itself)."""

    op = ""
    shape = (4, 5)
    seed = 31
    grad = True

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(self.seed).uniform(-1, 1, self.shape)
        self.inputs = {"X": x}
        self.attrs = dict(getattr(self, "attrs_", {}))
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        if self.grad:
            self.check_grad(["X"], "Out")


class TestBrokenInplaceSigmoid(_Unary, OpTest):
    op = "broken_inplace_sigmoid"

    def reference(self, inputs, attrs):
        return {"Out": 1.0 / (1.0 + np.exp(-inputs["X"]))}


class TestGoodInplaceSigmoid(TestBrokenInplaceSigmoid):
    op = "good_inplace_sigmoid"


class TestBrokenInplaceAxpy(OpTest):
    op = "broken_inplace_axpy"

    def setUp(self):
        self.op_type = self.op
        rng = np.random.default_rng(32)
        self.inputs = {"X": rng.uniform(-1, 1, (3, 4)), "Y": rng.uniform(-1, 1, (3, 4))}
        self.attrs = {"a": 3.0}
        self.outputs = {"Out": 3.0 * self.inputs["X"] + self.inputs["Y"]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")


class TestGoodInplaceAxpy(TestBrokenInplaceAxpy):
    op = "good_inplace_axpy"


class TestBrokenUndeclaredExp(_Unary, OpTest):
    op = "broken_undeclared_exp"

    def reference(self, inputs, attrs):
        return {"Out": np.exp(inputs["X"])}


class TestGoodUndeclaredExp(TestBrokenUndeclaredExp):
    op = "good_undeclared_exp"


class TestBrokenNnbFill(_Unary, OpTest):
    op = "broken_nnb_fill"
    attrs_ = {"value": 1.5}
    grad = False

    def reference(self, inputs, attrs):
        return {"Out": np.full(inputs["X"].shape, attrs["value"])}


class TestGoodNnbFill(TestBrokenNnbFill):
    op = "good_nnb_fill"


class TestBrokenScratchSoftmax(_Unary, OpTest):
    op = "broken_scratch_softmax"
    shape = (6, 7)

    def reference(self, inputs, attrs):
        e = np.exp(inputs["X"] - inputs["X"].max(axis=-1, keepdims=True))
        return {"Out": e / e.sum(axis=-1, keepdims=True)}


class TestGoodScratchSoftmax(TestBrokenScratchSoftmax):
    op = "good_scratch_softmax"


class TestBrokenSparseSgd(OpTest):
    op = "broken_sparse_sgd"
    opkit_sparse_inputs = ["Grad"]     # `sparse`: Grad may come as SelectedRows

    def setUp(self):
        self.op_type = self.op
        rng = np.random.default_rng(33)
        self.inputs = {"Param": rng.uniform(-1, 1, (6, 4)), "Grad": rng.uniform(-1, 1, (6, 4)),
                       "LearningRate": np.array([0.5])}
        self.attrs = {}
        self.outputs = {"ParamOut": self.inputs["Param"] - 0.5 * self.inputs["Grad"]}

    def test_check_output(self):
        self.check_output()


class TestGoodSparseSgd(TestBrokenSparseSgd):
    op = "good_sparse_sgd"


class TestBrokenReuseScale(_Unary, OpTest):
    op = "broken_reuse_scale"

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] * 2.0}


class TestGoodReuseScale(TestBrokenReuseScale):
    op = "good_reuse_scale"
