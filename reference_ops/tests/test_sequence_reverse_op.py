import numpy as np
from hypothesis import given, settings

from harness import OpTest
from harness.inputs.strategies import lod_tensors


def reverse_reference(x, lengths):
    out = np.empty_like(x)
    start = 0
    for n in lengths[-1]:
        out[start:start + n] = x[start:start + n][::-1]
        start += n
    return out


class TestSequenceReverse(OpTest):
    lengths = [[2, 0, 4, 1, 0]]

    def setUp(self):
        self.op_type = "sequence_reverse"
        x = np.random.default_rng(13).uniform(-1, 1, (sum(self.lengths[-1]), 3))
        self.inputs = {"X": (x, self.lengths)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, lengths = inputs["X"]
        return {"Y": (reverse_reference(x, lengths), lengths)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Y")


class TestSequenceReverseLevel2(TestSequenceReverse):
    lengths = [[2, 1], [3, 0, 2]]


@settings(max_examples=40, deadline=None)
@given(data=lod_tensors(levels=2, num_sequences=(0, 4), max_len=3))
def test_reverse_matches_loop(data):
    from harness.backend.seam import make
    from harness.backend.case import normalize_slots

    x, lengths = data
    p = make("sequence_reverse", normalize_slots({"X": (x, lengths)}), {})
    outs = p.forward()
    np.testing.assert_array_equal(outs["Y"], reverse_reference(x, lengths))
    assert p.lod_lengths("Y") == lengths
    grads = p.backward({"Y": outs["Y"]}, ["X"])
    np.testing.assert_array_equal(grads["X"], x)      # reverse twice
    assert p.grad_lod("X") == lengths
