"""reduce_prod's gradient as Out / X: NaN where X holds a zero (Paddle PR #64127 fixed it
on the composite path only; the CPU kernel of Paddle 3.3.1 still divides).
Plain Paddle: x = paddle.to_tensor([0., 2, 3], stop_gradient=False);
paddle.prod(x).backward(); x.grad -> [nan, 0, 0], expected [6, 0, 0]."""
import unittest

import numpy as np
from op_test import OpTest


class TestProdRows(OpTest):
    def setUp(self):
        self.op_type = "reduce_prod"
        x = np.random.uniform(0.5, 1.5, (3, 4)).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {"dim": [1]}
        self.outputs = {"Out": x.prod(axis=1)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


if __name__ == "__main__":
    unittest.main()
