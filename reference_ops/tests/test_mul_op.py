import numpy as np
from harness import OpTest


class TestMulOp(OpTest):
    x_shape, y_shape, x_num_col_dims, y_num_col_dims = (20, 8), (8, 12), 1, 1

    def setUp(self):
        self.op_type = "mul"
        rng = np.random.default_rng(201)
        self.inputs = {"X": rng.uniform(-1, 1, self.x_shape).astype("float64"),
                       "Y": rng.uniform(-1, 1, self.y_shape).astype("float64")}
        self.attrs = {"x_num_col_dims": self.x_num_col_dims,
                      "y_num_col_dims": self.y_num_col_dims}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, y = inputs["X"], inputs["Y"]
        xk, yk = attrs["x_num_col_dims"], attrs["y_num_col_dims"]
        x2 = x.reshape(int(np.prod(x.shape[:xk])), -1)
        y2 = y.reshape(int(np.prod(y.shape[:yk])), -1)
        return {"Out": np.dot(x2, y2).reshape(x.shape[:xk] + y.shape[yk:])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")

    def test_check_grad_ignore_x(self):
        self.check_grad(["Y"], "Out", no_grad_set={"X"})

    def test_check_grad_ignore_y(self):
        self.check_grad(["X"], "Out", no_grad_set={"Y"})


class TestMulOpFlatten(TestMulOp):
    x_shape, y_shape, x_num_col_dims, y_num_col_dims = (3, 4, 2, 5), (10, 3, 4), 2, 1


class TestMulOpFlattenY(TestMulOp):
    x_shape, y_shape, x_num_col_dims, y_num_col_dims = (6, 12), (3, 4, 9), 1, 2
