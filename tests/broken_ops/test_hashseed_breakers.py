import numpy as np
from harness import OpTest


class TestBrokenSetSum(OpTest):
    """Six positive inputs of very different magnitudes: any change of the order of the
    additions changes the last bits of the sum (well inside the output tolerance)."""

    op = "broken_set_sum"

    def setUp(self):
        self.op_type = self.op
        rng = np.random.default_rng(5)
        xs = [rng.uniform(1, 2, (4, 5)) * 10.0 ** -k for k in range(6)]
        self.inputs = {"X": [(f"x{i}", x) for i, x in enumerate(xs)]}
        self.outputs = {"Out": sum(xs[1:], xs[0].copy())}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad([f"x{i}" for i in range(6)], "Out")


class TestGoodSetSum(TestBrokenSetSum):
    op = "good_set_sum"
