"""renorm's per-slice norm overflows in float32: a slice of norm 1.4e20 is scaled to 0
instead of to max_norm (Paddle issue #71164 is renorm's 0-size SIGFPE on GPU; on CPU 3.3.1
the 0-size case runs, the overflow remains). Plain Paddle:
paddle.renorm(paddle.to_tensor([[1e20, 1e20], [1., 1.]], 'float32'), 2.0, 0, 1.0)
-> [[0, 0], [0.707, 0.707]], expected [[0.707, 0.707], [0.707, 0.707]]."""
import unittest

import numpy as np
from op_test import OpTest


class TestRenorm(OpTest):
    def setUp(self):
        self.op_type = "renorm"
        x = np.random.uniform(-2, 2, (3, 4)).astype("float64")
        norms = np.sqrt((x * x).sum(axis=1, keepdims=True))
        scale = np.where(norms > 1.0, 1.0 / (norms + 1e-7), 1.0)
        self.inputs = {"X": x}
        self.attrs = {"p": 2.0, "axis": 0, "max_norm": 1.0}
        self.outputs = {"Out": x * scale}

    def test_check_output(self):
        self.check_output()


if __name__ == "__main__":
    unittest.main()
