"""dist(x, x)'s gradient is NaN: 0 / 0 in the p-norm's derivative (Paddle PR #32448, fixed in
Paddle 2.1). Plain Paddle: x = paddle.rand([4, 4]); x.stop_gradient = False;
paddle.grad(paddle.dist(x, x, 2), x) -> NaN before 2.1, zeros after."""
import unittest

import numpy as np
from op_test import OpTest


class TestDistGrad(OpTest):
    def setUp(self):
        self.op_type = "dist"
        x = np.random.uniform(-1, 1, (3, 4)).astype("float64")
        y = np.random.uniform(-1, 1, (3, 4)).astype("float64")
        self.inputs = {"X": x, "Y": y}
        self.attrs = {"p": 2.0}
        self.outputs = {"Out": np.array(np.sqrt(((x - y) ** 2).sum()))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")


if __name__ == "__main__":
    unittest.main()
