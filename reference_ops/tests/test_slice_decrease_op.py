"""slice: decrease_axis (Out loses the named size-1 axes; all of them -> shape [1]),
infer_flags, and starts/ends given as tensors (StartsTensor > StartsTensorList > attr)."""
import numpy as np
from harness import OpTest


class TestSliceDecreaseAxis(OpTest):
    axes, starts, ends, decrease = [0, 2], [1, 0], [2, 3], [0]
    flags = [1, 1]

    def setUp(self):
        self.op_type = "slice"
        x = np.random.default_rng(3101).uniform(-1, 1, (3, 4, 5, 6))
        self.inputs = {"Input": x}
        self.attrs = {"axes": self.axes, "starts": self.starts, "ends": self.ends,
                      "decrease_axis": self.decrease, "infer_flags": self.flags}
        self.outputs = {"Out": self.expected(x)}

    def expected(self, x):
        return x[1, :, 0:3, :]

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["Input"], "Out")


class TestSliceDecreaseAllAxes(TestSliceDecreaseAxis):
    axes, starts, ends, decrease = [0, 1, 2, 3], [0, 1, 2, 3], [1, 2, 3, 4], [0, 1, 2, 3]
    flags = [1, 1, 1, 1]

    def expected(self, x):
        return x[0, 1, 2, 3:4]          # shape [1]


class TestSliceDecreaseNegativeStart(TestSliceDecreaseAxis):
    axes, starts, ends, decrease, flags = [3], [-1], [1000000], [3], [1]

    def expected(self, x):
        return x[:, :, :, -1]


class TestSliceStartsTensorList(TestSliceDecreaseAxis):
    """starts from tensors; attr starts holds placeholders (-1) and infer_flags -1."""
    axes, starts, ends, decrease, flags = [0, 1, 2], [-1, 0, -1], [3, 3, 4], [], [-1, 1, -1]

    def setUp(self):
        super().setUp()
        self.inputs["StartsTensorList"] = [("s%d" % i, np.array([v], dtype="int32"))
                                           for i, v in enumerate([1, 0, 2])]

    def expected(self, x):
        return x[1:3, 0:3, 2:4, :]

    def test_check_grad(self):
        self.check_grad(["Input"], "Out", no_grad_set={"s0", "s1", "s2"})


class TestSliceStartsEndsTensors(TestSliceDecreaseAxis):
    """StartsTensor wins over StartsTensorList and the attr; EndsTensor over the attr."""
    axes, starts, ends, decrease, flags = [0, 1], [0, 0], [1, 1], [0], [-1, -1]

    def setUp(self):
        super().setUp()
        self.inputs["StartsTensor"] = np.array([2, 1], dtype="int64")
        self.inputs["EndsTensor"] = np.array([3, 4], dtype="int32")
        self.inputs["StartsTensorList"] = [("s0", np.array([0], dtype="int32")),
                                           ("s1", np.array([0], dtype="int32"))]

    def expected(self, x):
        return x[2, 1:4]

    def test_check_grad(self):
        self.check_grad(["Input"], "Out",
                        no_grad_set={"StartsTensor", "EndsTensor", "s0", "s1"})


class TestSliceOnlyTensorsNoStartsEndsAttrs(TestSliceDecreaseAxis):
    """starts and ends attrs left out: both come as tensors."""
    axes, decrease, flags = [1, 2], [1], [-1, -1]

    def setUp(self):
        super().setUp()
        del self.attrs["starts"], self.attrs["ends"]
        self.inputs["StartsTensor"] = np.array([2, 0], dtype="int32")
        self.inputs["EndsTensor"] = np.array([3, -1], dtype="int32")

    def expected(self, x):
        return x[:, 2, 0:4, :]

    def test_check_grad(self):
        self.check_grad(["Input"], "Out", no_grad_set={"StartsTensor", "EndsTensor"})
