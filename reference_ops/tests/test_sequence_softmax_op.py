import numpy as np
from hypothesis import given, settings

from harness import OpTest
from harness.inputs.strategies import lod_tensors


def softmax_reference(x, lengths):
    out = np.zeros_like(x)
    start = 0
    for n in lengths[-1]:
        seq = x[start:start + n].reshape(-1)
        if n:
            e = np.exp(seq - seq.max())
            out[start:start + n] = (e / e.sum()).reshape(x[start:start + n].shape)
        start += n
    return out


class TestSequenceSoftmax(OpTest):
    lengths = [[3, 0, 4, 1]]

    def setUp(self):
        self.op_type = "sequence_softmax"
        x = np.random.default_rng(11).uniform(0.1, 1, (sum(self.lengths[-1]), 1))
        self.inputs = {"X": (x, self.lengths)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, lengths = inputs["X"]
        return {"Out": (softmax_reference(x, lengths), lengths)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out", max_relative_error=0.01)


class TestSequenceSoftmaxLevel2(TestSequenceSoftmax):
    lengths = [[1, 2], [2, 0, 3]]


@settings(max_examples=40, deadline=None)
@given(data=lod_tensors(dtypes=("float32", "float64"), feature_shape=(1,)))
def test_softmax_matches_loop(data):
    from harness.backend.seam import make
    from harness.backend.case import normalize_slots

    x, lengths = data
    p = make("sequence_softmax", normalize_slots({"X": (x, lengths)}), {})
    outs = p.forward()
    tol = 1e-5 if x.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(outs["Out"], softmax_reference(x.astype(np.float64), lengths),
                               rtol=tol, atol=tol)
    assert p.lod_lengths("Out") == lengths
