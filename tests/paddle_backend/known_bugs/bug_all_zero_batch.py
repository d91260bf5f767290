"""reduce_all refuses a [0, 3, 4] input reduced over axis 1 (Paddle issue #79362; it
reports GPU and CPU, Paddle 3.3.1's CPU kernel runs it). Plain Paddle:
paddle.all(paddle.empty([0, 3, 4], dtype='bool'), axis=1)."""
import unittest

import numpy as np
from op_test import OpTest


class TestAllAxis1(OpTest):
    def setUp(self):
        self.op_type = "reduce_all"
        x = np.random.randint(0, 2, (2, 3, 4)).astype("bool")
        self.inputs = {"X": x}
        self.attrs = {"dim": [1]}
        self.outputs = {"Out": x.all(axis=1)}

    def test_check_output(self):
        self.check_output()


if __name__ == "__main__":
    unittest.main()
