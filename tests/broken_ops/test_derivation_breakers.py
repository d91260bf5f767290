"""OpTests of derivation_breakers_op.py's broken ops and their twins: each author's case
passes; the bug shows only on a case derived from it (issue 45 point 5)."""
import numpy as np

from harness import OpTest


def _x(shape, seed=5, lo=-1.0, hi=1.0):
    x = np.random.default_rng(seed).uniform(lo, hi, shape)
    x[np.abs(x) < 0.1] = 0.4
    return x


class TestBrokenRowsumDiv(OpTest):
    op = "broken_rowsum_div"

    def setUp(self):
        self.op_type = self.op
        x = _x((3, 4))
        self.inputs = {"X": x}
        self.outputs = {"Out": x.sum(axis=-1)}

    def test_check_output(self):
        self.check_output()


class TestGoodRowsumDiv(TestBrokenRowsumDiv):
    op = "good_rowsum_div"


class TestBrokenNaiveNorm(OpTest):
    op = "broken_naive_norm"

    def setUp(self):
        self.op_type = self.op
        x = _x((3, 5))
        self.inputs = {"X": x}
        self.outputs = {"Out": np.sqrt((x * x).sum(axis=-1))}

    def test_check_output(self):
        self.check_output()


class TestGoodNaiveNorm(TestBrokenNaiveNorm):
    op = "good_naive_norm"


class TestBrokenSqRatio(OpTest):
    op = "broken_sq_ratio"

    def setUp(self):
        self.op_type = self.op
        x = _x((3, 4))
        self.inputs = {"X": x}
        self.outputs = {"Out": x * x / (x * x + 1)}

    def test_check_output(self):
        self.check_output()


class TestGoodSqRatio(TestBrokenSqRatio):
    op = "good_sq_ratio"


class TestBrokenProdRows(OpTest):
    op = "broken_prod_rows"

    def setUp(self):
        self.op_type = self.op
        x = _x((3, 4), lo=0.5, hi=1.5)
        self.inputs = {"X": x}
        self.outputs = {"Out": np.prod(x, axis=-1)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodProdRows(TestBrokenProdRows):
    op = "good_prod_rows"


class TestBrokenAxisCumsum(OpTest):
    op = "broken_axis_cumsum"

    def setUp(self):
        self.op_type = self.op
        x = _x((3, 4))
        self.inputs = {"X": x}
        self.attrs = {"axis": 1}
        self.outputs = {"Out": np.cumsum(x, axis=1)}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        return {"Out": x.copy() if x.ndim == 0 else np.cumsum(x, axis=attrs["axis"])}

    def test_check_output(self):
        self.check_output()


class TestGoodAxisCumsum(TestBrokenAxisCumsum):
    op = "good_axis_cumsum"


class TestBrokenTwoCauses(OpTest):
    op = "broken_two_causes"

    def setUp(self):
        self.op_type = self.op
        x = _x((3, 4))
        self.inputs = {"X": x}
        self.attrs = {"mode": "sum"}
        self.outputs = {"Out": x.sum(axis=-1)}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        return {"Out": x.max(axis=-1) if attrs["mode"] == "max" else x.sum(axis=-1)}

    def test_check_output(self):
        self.check_output()


class TestGoodTwoCauses(TestBrokenTwoCauses):
    op = "good_two_causes"
