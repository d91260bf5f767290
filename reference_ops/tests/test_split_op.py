import numpy as np
from harness import OpTest


class TestSplitOp(OpTest):
    shape, axis, num, sections = (4, 6, 5), 1, 3, []

    def setUp(self):
        self.op_type = "split"
        x = np.random.default_rng(1401).uniform(-1, 1, self.shape).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {"axis": self.axis, "num": self.num, "sections": self.sections}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["X"]
        axis = attrs["axis"] % x.ndim
        if attrs["sections"]:
            sizes = list(attrs["sections"])
            if -1 in sizes:
                sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
            points = np.cumsum(sizes)[:-1]
        else:
            points = attrs["num"]
        parts = np.split(x, points, axis=axis)
        return {"Out": [("out%d" % i, p) for i, p in enumerate(parts)]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], ["out0", "out1", "out2"])


class TestSplitOpSections(TestSplitOp):
    shape, axis, num, sections = (4, 5, 9), 2, 0, [2, 3, 4]


class TestSplitOpSectionsInfer(TestSplitOp):
    shape, axis, num, sections = (9, 4, 5), 0, 0, [2, -1, 4]


class TestSplitOpNegativeAxis(TestSplitOp):
    shape, axis, num, sections = (4, 5, 9), -1, 3, []
