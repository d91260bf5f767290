import numpy as np
from harness import OpTest


class TestConcatOp(OpTest):
    shapes, axis = [(2, 3, 4, 5), (2, 1, 4, 5), (2, 2, 4, 5)], 1

    def setUp(self):
        self.op_type = "concat"
        rng = np.random.default_rng(1301)
        self.inputs = {"X": [("x%d" % i, rng.uniform(-1, 1, s).astype("float64"))
                             for i, s in enumerate(self.shapes)]}
        self.attrs = {"axis": self.axis}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.concatenate([a for _, a in inputs["X"]], axis=attrs["axis"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["x0", "x1", "x2"], "Out")

    def test_check_grad_skip_one(self):
        self.check_grad(["x0", "x2"], "Out", no_grad_set={"x1"})


class TestConcatOpAxis0(TestConcatOp):
    shapes, axis = [(5, 20), (3, 20), (4, 20)], 0


class TestConcatOpNegativeAxis(TestConcatOp):
    shapes, axis = [(4, 5, 6), (4, 5, 2), (4, 5, 1)], -1
