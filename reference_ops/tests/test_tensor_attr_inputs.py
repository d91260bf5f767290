"""Attrs given as tensors, which take priority over the attr (as in Paddle): scale's
ScaleTensor, clip's Min/Max, concat's AxisTensor, split's AxisTensor and
SectionsTensorList. Each case sets the attr to a different value, so a kernel that ignored
the tensor would fail."""
import numpy as np
from harness import OpTest

RNG = np.random.default_rng(2601)


class TestScaleTensor(OpTest):
    def setUp(self):
        self.op_type = "scale"
        x = RNG.uniform(-1, 1, (4, 5))
        self.inputs = {"X": x, "ScaleTensor": np.array([2.5], dtype="float32")}
        self.attrs = {"scale": 7.0, "bias": 0.5}
        self.outputs = {"Out": x * 2.5 + 0.5}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out", no_grad_set={"ScaleTensor"})


class TestClipMinMaxTensors(OpTest):
    def setUp(self):
        self.op_type = "clip"
        x = RNG.uniform(0, 1, (6, 7))
        for b in (0.1, 0.3, 0.8):
            x[np.abs(x - b) < 0.01] = 0.5
        self.inputs = {"X": x, "Min": np.array([0.3], dtype="float32"),
                       "Max": np.array([0.8], dtype="float32")}
        self.attrs = {"min": 0.1, "max": 0.9}
        self.outputs = {"Out": np.clip(x, 0.3, 0.8)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out", no_grad_set={"Min", "Max"})


class TestClipMaxTensorOnly(TestClipMinMaxTensors):
    def setUp(self):
        super().setUp()
        del self.inputs["Min"]
        self.outputs = {"Out": np.clip(self.inputs["X"], 0.1, 0.8)}

    def test_check_grad(self):
        self.check_grad(["X"], "Out", no_grad_set={"Max"})


class TestConcatAxisTensor(OpTest):
    def setUp(self):
        self.op_type = "concat"
        xs = [RNG.uniform(-1, 1, (2, n, 3)) for n in (1, 4, 2)]
        self.inputs = {"X": [("x%d" % i, a) for i, a in enumerate(xs)],
                       "AxisTensor": np.array([1], dtype="int32")}
        self.attrs = {"axis": 0}
        self.outputs = {"Out": np.concatenate(xs, axis=1)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["x0", "x1", "x2"], "Out", no_grad_set={"AxisTensor"})


class TestSplitAxisTensor(OpTest):
    def setUp(self):
        self.op_type = "split"
        x = RNG.uniform(-1, 1, (4, 6, 3))
        self.inputs = {"X": x, "AxisTensor": np.array([1], dtype="int32")}
        self.attrs = {"axis": 0, "num": 3}
        self.outputs = {"Out": [("out%d" % i, p) for i, p in enumerate(np.split(x, 3, 1))]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], ["out0", "out1", "out2"], no_grad_set={"AxisTensor"})


class TestSplitSectionsTensorList(OpTest):
    def setUp(self):
        self.op_type = "split"
        x = RNG.uniform(-1, 1, (4, 7, 3))
        sections = [2, -1, 1]
        self.inputs = {"X": x, "SectionsTensorList": [
            ("s%d" % i, np.array([v], dtype="int32")) for i, v in enumerate(sections)]}
        self.attrs = {"axis": 1, "sections": [1, 1, 5]}
        self.outputs = {"Out": [("out%d" % i, p) for i, p in
                                enumerate(np.split(x, [2, 6], axis=1))]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], ["out0", "out1", "out2"], no_grad_set={"s0", "s1", "s2"})


def _dropout(x, attrs, seed_tensor=None):
    import opkit

    program = opkit.Program()
    block = program.global_block()
    block.create_var(name="x", dtype="float64", shape=list(x.shape))
    ins, feed = {"X": ["x"]}, {"x": x}
    if seed_tensor is not None:
        block.create_var(name="seed", dtype="int32", shape=[1])
        ins["Seed"], feed["seed"] = ["seed"], np.array([seed_tensor], dtype="int32")
    out = block.create_var(name="out", dtype="float64")
    mask = block.create_var(name="mask", dtype="uint8")
    block.append_op("dropout", inputs=ins, outputs={"Out": out, "Mask": mask}, attrs=attrs)
    return opkit.Executor(opkit.CPUPlace()).run(program, feed=feed, fetch_list=[out])[0]


def test_dropout_seed_tensor_takes_priority_over_the_attrs():
    x = np.ones((40, 50))
    by_attr = _dropout(x, {"dropout_prob": 0.5, "fix_seed": True, "seed": 11})
    by_tensor = _dropout(x, {"dropout_prob": 0.5, "fix_seed": True, "seed": 99}, seed_tensor=11)
    unfixed = _dropout(x, {"dropout_prob": 0.5}, seed_tensor=11)
    other = _dropout(x, {"dropout_prob": 0.5}, seed_tensor=12)
    np.testing.assert_array_equal(by_attr, by_tensor)
    np.testing.assert_array_equal(by_attr, unfixed)
    assert not np.array_equal(by_attr, other)
