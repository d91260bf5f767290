import numpy as np

import opkit
from harness import OpTest


class TestLessThanOp(OpTest):
    """No gradient: check_output only."""

    def setUp(self):
        self.op_type = "less_than"
        rng = np.random.default_rng(1801)
        x = rng.uniform(-1, 1, (10, 12)).astype("float64")
        y = rng.uniform(-1, 1, (10, 12)).astype("float64")
        y[0] = x[0]  # equal values are not less
        self.inputs = {"X": x, "Y": y}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] < inputs["Y"]}

    def test_check_output(self):
        self.check_output()


class TestLessThanBroadcast(TestLessThanOp):
    def setUp(self):
        self.op_type = "less_than"
        rng = np.random.default_rng(1802)
        self.inputs = {"X": rng.uniform(-1, 1, (4, 5, 6)).astype("float64"),
                       "Y": rng.uniform(-1, 1, (5,)).astype("float64")}
        self.attrs = {"axis": 1}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        # Y's dims line up with X's from `axis` on (not numpy's trailing alignment: with
        # equal dims that would silently compare along another axis)
        x, y = inputs["X"], inputs["Y"]
        axis = attrs.get("axis", -1)
        axis = x.ndim - y.ndim if axis == -1 else axis
        shape = (1,) * axis + y.shape + (1,) * (x.ndim - axis - y.ndim)
        return {"Out": x < y.reshape(shape)}


class TestLessThanInt64(TestLessThanOp):
    def setUp(self):
        self.op_type = "less_than"
        rng = np.random.default_rng(1803)
        self.inputs = {"X": rng.integers(-5, 5, (10, 11)).astype("int64"),
                       "Y": rng.integers(-5, 5, (10, 11)).astype("int64")}
        self.attrs = {}
        self.outputs = {"Out": self.inputs["X"] < self.inputs["Y"]}


class TestLessThanInt32(TestLessThanInt64):
    def setUp(self):
        super().setUp()
        self.inputs = {k: v.astype("int32") for k, v in self.inputs.items()}


def test_kernel_dtype_comes_from_x():
    """An int64 counter against an int64 bound picks the int64 kernel (no float input)."""
    scope = opkit.Scope()
    scope.var("i").set_value(opkit.LoDTensor(np.array([3], dtype="int64")))
    scope.var("n").set_value(opkit.LoDTensor(np.array([10], dtype="int64")))
    op = opkit.create_op("less_than", {"X": "i", "Y": "n"}, {"Out": "c"})
    op.run(scope, opkit.CPUPlace())
    out = scope.find_var("c").value().numpy()
    assert out.dtype == np.bool_ and out.tolist() == [True]


def test_layer_writes_into_given_cond():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        a = opkit.layers.fill_constant([1], "float32", 2.0)
        b = opkit.layers.fill_constant([1], "float32", 1.0)
        cond = opkit.layers.less_than(b, a)
        same = opkit.layers.less_than(a, b, cond=cond)
    assert same is cond and cond.dtype == "bool"
    (value,) = opkit.Executor().run(main, fetch_list=[cond], scope=opkit.Scope())
    assert value.tolist() == [False]
