"""OpTests of the two-input tie broken ops (tie_breakers_op.py) and their twins."""
import numpy as np

from harness import OpTest


def _xy(shape=(3, 4)):
    rng = np.random.default_rng(5)
    x, y = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)
    x[np.abs(x) < 0.05] = 0.3
    y[np.abs(y) < 0.05] = -0.3
    y[np.abs(x - y) < 0.05] += 0.2          # no tie, no kink near the drawn points
    return x, y


class TestBrokenTieMax(OpTest):
    op = "broken_tie_max"

    def setUp(self):
        self.op_type = self.op
        x, y = _xy()
        self.inputs = {"X": x, "Y": y}
        self.outputs = {"Out": np.maximum(x, y)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")


class TestGoodTieMax(TestBrokenTieMax):
    op = "good_tie_max"


class TestBrokenTieReluSum(OpTest):
    op = "broken_tie_relu_sum"

    def setUp(self):
        self.op_type = self.op
        x, y = _xy()
        self.inputs = {"X": x, "Y": y}
        self.outputs = {"Out": np.maximum(x, 0) + np.maximum(y, 0)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")


class TestGoodTieReluSum(TestBrokenTieReluSum):
    op = "good_tie_relu_sum"
