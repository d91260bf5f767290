"""An OpTest a Paddle op developer writes for their op (here Paddle's `silu`), run on
Paddle's own CPU kernel with:

    opkit test silu --backend paddle --tests examples/paddle_op/test_silu_op.py
"""
import numpy as np

from harness import OpTest


def silu(x):
    return x / (1.0 + np.exp(-x))


class TestSiluOp(OpTest):
    def setUp(self):
        self.op_type = "silu"
        x = np.random.uniform(-3, 3, (4, 7)).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = {"Out": silu(x)}

    def reference(self, inputs, attrs):
        return {"Out": silu(np.asarray(inputs["X"]))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")
