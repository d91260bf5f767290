"""The OpTests shared by elementwise_add/_sub/_mul: one base case and Paddle's broadcast
shapes. Each test file subclasses `ElementwiseCase` and adds `broadcast_variants(...)`."""
import numpy as np

from harness import OpTest

# (x_shape, y_shape, axis) of the broadcast variants, by class-name suffix
BROADCASTS = {
    "BroadcastAxis1": ((4, 5, 6), (5,), 1),
    "BroadcastAxis0": ((4, 5, 6), (4, 5), 0),
    "BroadcastLast": ((4, 5, 6), (5, 6), -1),
    "TrailingOnes": ((4, 5, 6), (5, 1), 1),
    "ScalarY": ((10, 12), (1,), -1),
    "MiddleOne": ((4, 5, 6), (4, 1, 6), 0),
}


def y_view(x_shape, y_shape, axis):
    """Independent restatement of Paddle's rule: Y aligned with X's dims at `axis` (a Y of
    X's rank or more: plain broadcasting, axis plays no part)."""
    if len(y_shape) >= len(x_shape):
        return list(y_shape)
    if axis == -1:
        axis = len(x_shape) - len(y_shape)
    y = list(y_shape)
    while len(y) > 1 and y[-1] == 1:
        y.pop()
    if axis < 0 or axis + len(y) > len(x_shape):
        raise ValueError(f"axis {axis} does not fit Y {y_shape} into X {x_shape}")
    return [1] * axis + y + [1] * (len(x_shape) - axis - len(y))


class ElementwiseCase(OpTest):
    """Set `op` (the op type) and `fn` (numpy's function) in a subclass."""

    op = ""
    fn = None
    seed = 101
    x_shape, y_shape, axis = (4, 5, 6), (4, 5, 6), -1

    def setUp(self):
        self.op_type = self.op
        rng = np.random.default_rng(self.seed)
        x = rng.uniform(0.1, 1, self.x_shape).astype("float64")
        y = rng.uniform(0.1, 1, self.y_shape).astype("float64")
        self.inputs = {"X": x, "Y": y}
        self.attrs = {"axis": self.axis}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, y = inputs["X"], inputs["Y"]
        return {"Out": type(self).fn(x, y.reshape(y_view(x.shape, y.shape, attrs["axis"])))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")

    def test_check_grad_ignore_x(self):
        self.check_grad(["Y"], "Out", no_grad_set={"X"})

    def test_check_grad_ignore_y(self):
        self.check_grad(["X"], "Out", no_grad_set={"Y"})


def broadcast_variants(base: type) -> dict:
    """{class name: subclass of `base` for each broadcast shape}, for the test module's
    globals (so pytest and `opkit test` find them)."""
    stem = base.__name__[:-2] if base.__name__.endswith("Op") else base.__name__
    return {f"{stem}{suffix}": type(f"{stem}{suffix}", (base,), {
        "x_shape": x_shape, "y_shape": y_shape, "axis": axis, "__module__": base.__module__})
        for suffix, (x_shape, y_shape, axis) in BROADCASTS.items()}
