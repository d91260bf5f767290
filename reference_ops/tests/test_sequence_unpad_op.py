import numpy as np

from harness import OpTest


def unpad_reference(x, length):
    rows = [x[i, :n] for i, n in enumerate(length)]
    out = np.concatenate(rows, axis=0) if rows else np.zeros((0,) + x.shape[2:], x.dtype)
    return out, [[int(n) for n in length]]


class TestSequenceUnpad(OpTest):
    def setUp(self):
        self.op_type = "sequence_unpad"
        x = np.random.default_rng(19).uniform(-1, 1, (4, 5, 3))
        self.inputs = {"X": x, "Length": np.array([2, 0, 5, 1], dtype=np.int64)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": unpad_reference(inputs["X"], inputs["Length"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestSequenceUnpadAllEmpty(TestSequenceUnpad):
    def setUp(self):
        super().setUp()
        self.inputs["Length"] = np.zeros(4, dtype=np.int64)
        self.outputs = self.reference(self.inputs, self.attrs)


def test_unpad_lod_check_is_a_skip():
    from opkit_fluid.checks.lod import check

    t = TestSequenceUnpad()
    t.setUp()
    results = check(t.to_case())
    assert [(r.status, r.message) for r in results] == [("skip", "no LoD input")]


class TestSequenceUnpad2DX(OpTest):
    """A 2-D X [N, L] gives Out of shape [sum(Length), 1], as in Paddle."""

    def setUp(self):
        self.op_type = "sequence_unpad"
        x = np.random.default_rng(23).uniform(-1, 1, (3, 6))
        length = np.array([2, 6, 3], dtype=np.int64)
        self.inputs = {"X": x, "Length": length}
        self.attrs = {}
        out = np.concatenate([x[i, :n] for i, n in enumerate(length)]).reshape(-1, 1)
        self.outputs = {"Out": (out, [length.tolist()])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")
