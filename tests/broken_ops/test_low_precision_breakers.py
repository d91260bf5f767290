import numpy as np
from harness import OpTest


class TestBrokenLpRowSum(OpTest):
    """Rows of 256: accumulated in float16 the sum is off by many ulps."""
    op = "broken_lp_row_sum"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": np.random.default_rng(41).uniform(0.1, 1.0, (4, 256))}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"].sum(axis=-1)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodLpRowSum(TestBrokenLpRowSum):
    op = "good_lp_row_sum"


class TestBrokenLpRowNorm(TestBrokenLpRowSum):
    op = "broken_lp_row_norm"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": np.random.default_rng(42).uniform(0.1, 1.0, (4, 6))}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.sqrt((inputs["X"] ** 2).sum(axis=-1))}


class TestGoodLpRowNorm(TestBrokenLpRowNorm):
    op = "good_lp_row_norm"


class TestBrokenLpScale(TestBrokenLpRowSum):
    op = "broken_lp_scale"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": np.random.default_rng(43).uniform(0.1, 1.0, (6, 8))}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": 1.7 * inputs["X"]}


class TestGoodLpScale(TestBrokenLpScale):
    op = "good_lp_scale"


class TestBrokenLpTwin(TestBrokenLpRowSum):
    op = "broken_lp_twin"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": np.random.default_rng(44).uniform(0.1, 1.0, (3, 4))}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] ** 2}


class TestGoodLpTwin(TestBrokenLpTwin):
    op = "good_lp_twin"
