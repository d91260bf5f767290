"""cross_entropy with hard labels of rank(X) - 1 (no trailing 1): Y has Label's shape."""
import numpy as np
from harness import OpTest


class TestCrossEntropyLabelRankMinusOne(OpTest):
    shape, classes, ignore_index = (6,), 5, -100

    def setUp(self):
        self.op_type = "cross_entropy"
        rng = np.random.default_rng(3201)
        x = rng.uniform(0.1, 1.0, self.shape + (self.classes,))
        x /= x.sum(axis=-1, keepdims=True)
        label = rng.integers(0, self.classes, self.shape).astype("int64")
        if self.ignore_index >= 0:
            label.reshape(-1)[0] = self.ignore_index
        self.inputs = {"X": x, "Label": label}
        self.attrs = {"soft_label": False, "ignore_index": self.ignore_index}
        picked = np.take_along_axis(x, np.clip(label, 0, self.classes - 1)[..., None],
                                    axis=-1)[..., 0]
        y = np.where(label == self.ignore_index, 0.0, -np.log(picked))
        self.outputs = {"Y": y}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Y", no_grad_set={"Label"})


class TestCrossEntropyLabelRankMinusOneHighRank(TestCrossEntropyLabelRankMinusOne):
    shape, classes = (3, 2, 4), 3


class TestCrossEntropyLabelRankMinusOneIgnore(TestCrossEntropyLabelRankMinusOne):
    shape, classes, ignore_index = (4, 3), 4, 2
