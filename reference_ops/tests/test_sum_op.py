import numpy as np
from harness import OpTest


class TestSumOp(OpTest):
    opkit_sparse_inputs = ["X"]   # check `sparse`: the last X as SelectedRows, duplicate rows

    def setUp(self):
        self.op_type = "sum"
        rng = np.random.default_rng(801)
        xs = [("x%d" % i, rng.uniform(-1, 1, (10, 12)).astype("float64")) for i in range(3)]
        self.inputs = {"X": xs}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.add.reduce([a for _, a in inputs["X"]])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["x0", "x1", "x2"], "Out")


class TestSumOpSingle(TestSumOp):
    def setUp(self):
        super().setUp()
        self.inputs = {"X": self.inputs["X"][:1]}
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_grad(self):
        self.check_grad(["x0"], "Out")
