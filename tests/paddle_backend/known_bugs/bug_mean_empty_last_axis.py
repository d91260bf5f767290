"""reduce_mean over the last axis of a [2, 0, 4] tensor hangs on CPU (Paddle issue #71826,
Paddle 3.0; fixed by 3.3.1). Plain Paddle: paddle.mean(paddle.zeros([2, 0, 4]), axis=-1)."""
import unittest

import numpy as np
from op_test import OpTest


class TestMeanLastAxis(OpTest):
    def setUp(self):
        self.op_type = "reduce_mean"
        x = np.random.uniform(-1, 1, (2, 3, 4)).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {"dim": [-1]}
        self.outputs = {"Out": x.mean(axis=-1)}

    def test_check_output(self):
        self.check_output()


if __name__ == "__main__":
    unittest.main()
