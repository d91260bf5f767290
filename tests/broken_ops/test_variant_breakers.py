"""OpTests of the variant-check broken ops (variant_breakers_op.py) and their twins."""
import numpy as np

from harness import OpTest


def _x(shape, seed=3):
    x = np.random.default_rng(seed).uniform(-1, 1, shape)
    x[np.abs(x) < 0.05] = 0.3
    return x


class TestBrokenLayoutScale(OpTest):
    op = "broken_layout_scale"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x((3, 4))}
        self.outputs = {"Out": self.inputs["X"] * 2}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodLayoutScale(TestBrokenLayoutScale):
    op = "good_layout_scale"


class TestBrokenEmptyCenter(OpTest):
    op = "broken_empty_center"

    def setUp(self):
        self.op_type = self.op
        x = _x((3, 4))
        self.inputs = {"X": x}
        self.outputs = {"Out": x - x[0]}

    def test_check_output(self):
        self.check_output()


class TestGoodEmptyCenter(TestBrokenEmptyCenter):
    op = "good_empty_center"


class TestBrokenNaiveSoftmax(OpTest):
    op = "broken_naive_softmax"

    def setUp(self):
        self.op_type = self.op
        x = _x((3, 5))
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        self.inputs = {"X": x}
        self.outputs = {"Out": e / e.sum(axis=-1, keepdims=True)}

    def test_check_output(self):
        self.check_output()


class TestGoodNaiveSoftmax(TestBrokenNaiveSoftmax):
    op = "good_naive_softmax"


class TestBrokenKinkRelu(OpTest):
    op = "broken_kink_relu"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": _x((4, 5))}
        self.outputs = {"Out": np.maximum(self.inputs["X"], 0)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodKinkRelu(TestBrokenKinkRelu):
    op = "good_kink_relu"


class TestBrokenDedupSum(OpTest):
    op = "broken_dedup_sum"

    def setUp(self):
        self.op_type = self.op
        xs = [_x((2, 3), seed) for seed in (1, 2, 3)]
        self.inputs = {"X": [("x0", xs[0]), ("x1", xs[1]), ("x2", xs[2])]}
        self.outputs = {"Out": xs[0] + xs[1] + xs[2]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["x0", "x1", "x2"], "Out")


class TestGoodDedupSum(TestBrokenDedupSum):
    op = "good_dedup_sum"


class TestBrokenTwiceRows(OpTest):
    op = "broken_twice_rows"

    def setUp(self):
        self.op_type = self.op
        x = _x((3, 2))
        self.inputs = {"X": x}
        self.outputs = {"Out": np.concatenate([x, x])}

    def test_check_output(self):
        self.check_output()


class TestGoodTwiceRows(TestBrokenTwiceRows):
    op = "good_twice_rows"


class TestBrokenSeqLast(OpTest):
    op = "broken_seq_last"

    def setUp(self):
        self.op_type = self.op
        x = _x((6, 2))
        self.inputs = {"X": (x, [[2, 3, 1]])}
        self.outputs = {"Out": x[[1, 4, 5]]}

    def test_check_output(self):
        self.check_output()


class TestGoodSeqLast(TestBrokenSeqLast):
    op = "good_seq_last"
