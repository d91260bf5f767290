import numpy as np
from harness import OpTest


def _probs(rng, n, d):
    x = rng.uniform(0.1, 1.0, (n, d))
    return (x / x.sum(axis=1, keepdims=True)).astype("float64")


class TestCrossEntropyOp(OpTest):
    """Hard labels."""

    def setUp(self):
        self.op_type = "cross_entropy"
        rng = np.random.default_rng(1101)
        x = _probs(rng, 30, 10)
        label = rng.integers(0, 10, (30, 1)).astype("int64")
        self.inputs = {"X": x, "Label": label}
        self.attrs = {"soft_label": False}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, label = inputs["X"], inputs["Label"]
        if attrs.get("soft_label", False):
            return {"Y": -np.sum(label * np.log(x), axis=-1, keepdims=True)}
        ignore = attrs.get("ignore_index", -100)
        lab = label.reshape(-1)
        picked = x.reshape(-1, x.shape[-1])[np.arange(lab.size), np.where(lab == ignore, 0, lab)]
        y = np.where(lab == ignore, 0.0, -np.log(picked))
        return {"Y": y.reshape(x.shape[:-1] + (1,))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        # -log(x) is strongly curved for small probabilities: a small delta keeps the
        # central difference exact enough
        self.check_grad(["X"], "Y", no_grad_set={"Label"}, numeric_grad_delta=1e-4)


class TestCrossEntropyOpIgnoreIndex(TestCrossEntropyOp):
    def setUp(self):
        super().setUp()
        label = self.inputs["Label"].copy()
        label[::4] = 3
        self.inputs["Label"] = label
        self.attrs = {"soft_label": False, "ignore_index": 3}
        self.outputs = self.reference(self.inputs, self.attrs)


class TestCrossEntropyOpSoftLabel(TestCrossEntropyOp):
    def setUp(self):
        self.op_type = "cross_entropy"
        rng = np.random.default_rng(1102)
        x = _probs(rng, 20, 8)
        label = _probs(rng, 20, 8)
        self.inputs = {"X": x, "Label": label}
        self.attrs = {"soft_label": True}
        self.outputs = self.reference(self.inputs, self.attrs)


class TestCrossEntropyOp3D(TestCrossEntropyOp):
    def setUp(self):
        self.op_type = "cross_entropy"
        rng = np.random.default_rng(1103)
        x = _probs(rng, 24, 6).reshape(4, 6, 6)
        label = rng.integers(0, 6, (4, 6, 1)).astype("int64")
        self.inputs = {"X": x, "Label": label}
        self.attrs = {"soft_label": False}
        self.outputs = self.reference(self.inputs, self.attrs)
