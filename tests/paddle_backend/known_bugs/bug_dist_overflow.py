"""dist computes sum(|x - y|^p) before the root: inf where the distance is finite
(Paddle PR #74448: the float16 overflow of dist / normalize; float32 is the same).
Plain Paddle: paddle.dist(paddle.to_tensor([1e20], 'float32'),
paddle.to_tensor([-1e20], 'float32')) -> inf, expected 2e20."""
import unittest

import numpy as np
from op_test import OpTest


class TestDist(OpTest):
    def setUp(self):
        self.op_type = "dist"
        x = np.random.uniform(-1, 1, (3, 4)).astype("float64")
        y = np.random.uniform(-1, 1, (3, 4)).astype("float64")
        self.inputs = {"X": x, "Y": y}
        self.attrs = {"p": 2.0}
        self.outputs = {"Out": np.array(np.sqrt(((x - y) ** 2).sum()))}

    def test_check_output(self):
        self.check_output()


if __name__ == "__main__":
    unittest.main()
