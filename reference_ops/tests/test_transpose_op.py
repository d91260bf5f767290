import numpy as np
from harness import OpTest


class TestTransposeOp(OpTest):
    shape, axis = (10, 12), [1, 0]

    def setUp(self):
        self.op_type = "transpose"
        self.inputs = {"X": np.random.default_rng(1601).uniform(-1, 1, self.shape).astype("float64")}
        self.attrs = {"axis": self.axis}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.transpose(inputs["X"], attrs["axis"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestTransposeOp3D(TestTransposeOp):
    shape, axis = (3, 4, 5), [2, 0, 1]


class TestTransposeOp4D(TestTransposeOp):
    shape, axis = (2, 3, 4, 5), [0, 2, 3, 1]
