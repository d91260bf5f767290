import numpy as np
from harness import OpTest


def _y_view(x_shape, y_shape, axis):
    """Independent restatement of Paddle's rule: Y aligned with X's dims at `axis`."""
    if axis == -1:
        axis = len(x_shape) - len(y_shape)
    y = list(y_shape)
    while len(y) > 1 and y[-1] == 1:
        y.pop()
    return [1] * axis + y + [1] * (len(x_shape) - axis - len(y))


class TestElementwiseAddOp(OpTest):
    x_shape, y_shape, axis = (4, 5, 6), (4, 5, 6), -1

    def setUp(self):
        self.op_type = "elementwise_add"
        rng = np.random.default_rng(101)
        x = rng.uniform(0.1, 1, self.x_shape).astype("float64")
        y = rng.uniform(0.1, 1, self.y_shape).astype("float64")
        self.inputs = {"X": x, "Y": y}
        self.attrs = {"axis": self.axis}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, y = inputs["X"], inputs["Y"]
        return {"Out": x + y.reshape(_y_view(x.shape, y.shape, attrs["axis"]))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")

    def test_check_grad_ignore_x(self):
        self.check_grad(["Y"], "Out", no_grad_set={"X"})

    def test_check_grad_ignore_y(self):
        self.check_grad(["X"], "Out", no_grad_set={"Y"})


class TestElementwiseAddBroadcastAxis1(TestElementwiseAddOp):
    x_shape, y_shape, axis = (4, 5, 6), (5,), 1


class TestElementwiseAddBroadcastAxis0(TestElementwiseAddOp):
    x_shape, y_shape, axis = (4, 5, 6), (4, 5), 0


class TestElementwiseAddBroadcastLast(TestElementwiseAddOp):
    x_shape, y_shape, axis = (4, 5, 6), (5, 6), -1


class TestElementwiseAddTrailingOnes(TestElementwiseAddOp):
    x_shape, y_shape, axis = (4, 5, 6), (5, 1), 1


class TestElementwiseAddScalarY(TestElementwiseAddOp):
    x_shape, y_shape, axis = (10, 12), (1,), -1


class TestElementwiseAddMiddleOne(TestElementwiseAddOp):
    x_shape, y_shape, axis = (4, 5, 6), (4, 1, 6), 0
