"""elementwise_pow's gradient at (0, 0) differs from PyTorch's (Paddle issue #45054; the
maintainers: x^y is not differentiable at (0, 0), a contract difference, not a bug).
Plain Paddle: x = y = paddle.to_tensor([0.], stop_gradient=False);
paddle.pow(x, y).backward()."""
import unittest

import numpy as np
from op_test import OpTest


class TestPow(OpTest):
    def setUp(self):
        self.op_type = "elementwise_pow"
        x = np.random.uniform(0.5, 1.5, (3, 4)).astype("float64")
        y = np.random.uniform(0.5, 1.5, (3, 4)).astype("float64")
        self.inputs = {"X": x, "Y": y}
        self.outputs = {"Out": np.power(x, y)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")


if __name__ == "__main__":
    unittest.main()
