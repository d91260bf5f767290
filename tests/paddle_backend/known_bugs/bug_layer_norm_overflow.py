"""layer_norm's variance as E(x^2) - E(x)^2 in float32 (Paddle PRs #33534, #74060): values
near 1e20 give Y = 0 where the normalized values are O(1). Plain Paddle:
paddle.nn.functional.layer_norm(paddle.to_tensor([[1e20, -1e20, 1.]], 'float32'), [3])
-> [[0, 0, 0]], expected [[1.22, -1.22, 0]]."""
import unittest

import numpy as np
from op_test import OpTest


class TestLayerNorm(OpTest):
    def setUp(self):
        self.op_type = "layer_norm"
        x = np.random.uniform(-1, 1, (2, 6)).astype("float64")
        scale, bias = np.ones(6), np.zeros(6)
        mean, var = x.mean(axis=1), x.var(axis=1)
        self.inputs = {"X": x, "Scale": scale, "Bias": bias}
        self.attrs = {"epsilon": 1e-5, "begin_norm_axis": 1}
        self.outputs = {"Y": (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-5),
                        "Mean": mean, "Variance": var}

    def test_check_output(self):
        self.check_output(atol=1e-4)


if __name__ == "__main__":
    unittest.main()
