"""heaviside(NaN) gives 0, not NaN (Paddle issue #79459, Paddle 3.3.1 CPU). Plain Paddle:
paddle.heaviside(paddle.to_tensor([float('nan')]), paddle.ones([1])) -> [0.]."""
import unittest

import numpy as np
from op_test import OpTest


class TestHeaviside(OpTest):
    def setUp(self):
        self.op_type = "elementwise_heaviside"
        x = np.random.uniform(-1, 1, (3, 4)).astype("float64")
        y = np.random.uniform(-1, 1, (3, 4)).astype("float64")
        self.inputs = {"X": x, "Y": y}
        self.outputs = {"Out": np.heaviside(x, y)}

    def test_check_output(self):
        self.check_output()


if __name__ == "__main__":
    unittest.main()
