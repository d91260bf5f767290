import numpy as np
from harness import OpTest


class TestSliceOp(OpTest):
    shape, axes, starts, ends = (3, 4, 5, 6), [0, 1, 2], [1, 0, 2], [3, 3, 4]

    def setUp(self):
        self.op_type = "slice"
        self.inputs = {"Input": np.random.default_rng(1701).uniform(-1, 1, self.shape).astype("float64")}
        self.attrs = {"axes": self.axes, "starts": self.starts, "ends": self.ends}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["Input"]
        index = [slice(None)] * x.ndim
        for a, s, e in zip(attrs["axes"], attrs["starts"], attrs["ends"]):
            index[a] = slice(s, e)  # Python slicing clamps and wraps negatives like Paddle
        return {"Out": x[tuple(index)]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["Input"], "Out")


class TestSliceOpNegative(TestSliceOp):
    shape, axes, starts, ends = (3, 4, 5, 6), [1, 3], [-3, -4], [-1, 10000]


class TestSliceOpLastAxis(TestSliceOp):
    shape, axes, starts, ends = (10, 12), [1], [2], [7]
