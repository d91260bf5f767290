import numpy as np
from harness import OpTest


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class TestSoftmaxOp(OpTest):
    shape, axis = (10, 12), -1

    def setUp(self):
        self.op_type = "softmax"
        self.inputs = {"X": np.random.default_rng(1001).uniform(-2, 2, self.shape).astype("float64")}
        self.attrs = {"axis": self.axis}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": _softmax(inputs["X"], attrs["axis"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out", max_relative_error=0.01)


class TestSoftmaxOpAxis1(TestSoftmaxOp):
    shape, axis = (3, 5, 8), 1


class TestSoftmaxOpAxis0(TestSoftmaxOp):
    shape, axis = (6, 4, 5), 0
