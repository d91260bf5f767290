"""p_norm squares before it scales: a float32 vector of norm 1.4e20 gives inf (Paddle PR
#74197: the same overflow, for float16, fixed on GPU only).
Plain Paddle: paddle.linalg.norm(paddle.to_tensor([1e20, 1e20], 'float32')) -> inf."""
import unittest

import numpy as np
from op_test import OpTest


class TestPNormRows(OpTest):
    def setUp(self):
        self.op_type = "p_norm"
        x = np.random.uniform(-1, 1, (3, 5)).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {"porder": 2.0, "axis": -1, "epsilon": 1e-12, "keepdim": False,
                      "asvector": False}
        self.outputs = {"Out": np.sqrt((x * x).sum(axis=-1))}

    def test_check_output(self):
        self.check_output()


if __name__ == "__main__":
    unittest.main()
