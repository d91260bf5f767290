import numpy as np
from harness import OpTest


class TestReshapeOp(OpTest):
    x_shape, shape = (4, 5, 6), [20, 6]

    def setUp(self):
        self.op_type = "reshape"
        self.inputs = {"X": np.random.default_rng(1501).uniform(-1, 1, self.x_shape).astype("float64")}
        self.attrs = {"shape": self.shape}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["X"]
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(attrs["shape"])]
        return {"Out": x.reshape(shape)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestReshapeOpInfer(TestReshapeOp):
    x_shape, shape = (4, 5, 6), [-1, 10]


class TestReshapeOpCopyDim(TestReshapeOp):
    x_shape, shape = (4, 5, 6), [0, -1]


class TestReshapeOpCopyDims(TestReshapeOp):
    x_shape, shape = (4, 5, 6), [0, 0, 3, 2]
