"""reshape2 / transpose2: Out as reshape / transpose, XShape of shape [0] + shape(X) (no
data), the grad op reading XShape; reshape2's shape from Input(Shape) or
Input(ShapeTensor), which take priority over the attr."""
import numpy as np
from harness import OpTest

RNG = np.random.default_rng(2801)


class TestReshape2(OpTest):
    x_shape, shape, out_shape = (2, 60), [12, 10], (12, 10)

    def setUp(self):
        self.op_type = "reshape2"
        x = RNG.uniform(-1, 1, self.x_shape)
        self.inputs = {"X": x}
        self.attrs = {"shape": self.shape}
        self.outputs = {"Out": x.reshape(self.out_shape),
                        "XShape": np.zeros((0,) + self.x_shape)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestReshape2ZeroAndMinusOne(TestReshape2):
    x_shape, shape, out_shape = (10, 2, 6), [10, 0, 3, -1], (10, 2, 3, 2)


class TestReshape2ShapeInput(TestReshape2):
    x_shape, shape, out_shape = (6, 20), [0, -1, 20], (2, 3, 20)

    def setUp(self):
        super().setUp()
        self.inputs["Shape"] = np.array(self.out_shape, dtype="int32")

    def test_check_grad(self):
        self.check_grad(["X"], "Out", no_grad_set={"Shape"})


class TestReshape2ShapeTensorList(TestReshape2):
    x_shape, shape, out_shape = (5, 20), [-1, -1, -1], (5, 4, 5)

    def setUp(self):
        super().setUp()
        self.inputs["ShapeTensor"] = [("s%d" % i, np.array([v], dtype="int32"))
                                      for i, v in enumerate([5, -1, 5])]

    def test_check_grad(self):
        self.check_grad(["X"], "Out", no_grad_set={"s0", "s1", "s2"})


class TestTranspose2(OpTest):
    x_shape, axis = (2, 3, 4, 5), [0, 2, 3, 1]

    def setUp(self):
        self.op_type = "transpose2"
        x = RNG.uniform(-1, 1, self.x_shape)
        self.inputs = {"X": x}
        self.attrs = {"axis": self.axis}
        self.outputs = {"Out": x.transpose(self.axis), "XShape": np.zeros((0,) + self.x_shape)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestTranspose2Rank2(TestTranspose2):
    x_shape, axis = (3, 7), [1, 0]
