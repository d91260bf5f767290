import numpy as np
from hypothesis import given, settings

from harness import OpTest
from harness.inputs.strategies import lod_tensors


def concat_reference(items):
    """items: [(x, lengths)] with the same number of sequences (last level)."""
    n = len(items[0][1][-1])
    starts = [0] * len(items)
    pieces, out_lengths = [], []
    for i in range(n):
        total = 0
        for k, (x, lengths) in enumerate(items):
            m = lengths[-1][i]
            pieces.append(x[starts[k]:starts[k] + m])
            starts[k] += m
            total += m
        out_lengths.append(total)
    x0 = items[0][0]
    out = np.concatenate(pieces, axis=0) if pieces else np.zeros((0,) + x0.shape[1:], x0.dtype)
    return out, [list(level) for level in items[0][1][:-1]] + [out_lengths]


class TestSequenceConcat(OpTest):
    def setUp(self):
        self.op_type = "sequence_concat"
        rng = np.random.default_rng(23)
        a = rng.uniform(-1, 1, (5, 3))
        b = rng.uniform(-1, 1, (4, 3))
        self.inputs = {"X": [("x0", (a, [[2, 0, 3, 0]])), ("x1", (b, [[0, 1, 1, 2]]))]}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": concat_reference([v for _, v in inputs["X"]])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["x0", "x1"], "Out")


class TestSequenceConcatThree(TestSequenceConcat):
    def setUp(self):
        super().setUp()
        c = np.random.default_rng(29).uniform(-1, 1, (2, 3))
        self.inputs["X"].append(("x2", (c, [[1, 0, 0, 1]])))
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_grad(self):
        self.check_grad(["x0", "x1", "x2"], "Out")


@settings(max_examples=30, deadline=None)
@given(a=lod_tensors(dtypes=("float64",), num_sequences=(4, 4)),
       b=lod_tensors(dtypes=("float64",), num_sequences=(4, 4)))
def test_concat_matches_loop(a, b):
    from harness.backend.seam import make
    from harness.backend.case import normalize_slots

    p = make("sequence_concat", normalize_slots({"X": [("a", a), ("b", b)]}), {})
    outs = p.forward()
    want, lengths = concat_reference([a, b])
    np.testing.assert_array_equal(outs["Out"], want)
    assert p.lod_lengths("Out") == lengths
    grads = p.backward({"Out": outs["Out"]}, ["a", "b"])
    np.testing.assert_array_equal(grads["a"], a[0])
    np.testing.assert_array_equal(grads["b"], b[0])
    assert p.grad_lod("a") == a[1] and p.grad_lod("b") == b[1]
