import numpy as np
from hypothesis import given, settings

from harness import OpTest
from harness.inputs.strategies import lod_tensors


def expand_reference_arrays(x, x_lengths, y_lengths, ref_level=-1):
    """Per-sequence loop: (Out, Out lengths or None)."""
    repeats = y_lengths[ref_level]
    seqs = []
    if x_lengths:
        start = 0
        for n in x_lengths[0]:
            seqs.append(x[start:start + n])
            start += n
    else:
        seqs = [x[i:i + 1] for i in range(x.shape[0])]
    assert len(seqs) == len(repeats), "X's sequences must match Y's reference level"
    pieces, out_lengths = [], []
    for seq, r in zip(seqs, repeats):
        for _ in range(r):
            pieces.append(seq)
            out_lengths.append(seq.shape[0])
    out = np.concatenate(pieces, axis=0) if pieces else np.zeros((0,) + x.shape[1:], x.dtype)
    return out, ([out_lengths] if x_lengths else None)


class TestSequenceExpand(OpTest):
    def setUp(self):
        self.op_type = "sequence_expand"
        rng = np.random.default_rng(5)
        x = rng.uniform(-1, 1, (6, 4))
        y = rng.uniform(-1, 1, (5, 1))
        self.inputs = {"X": (x, [[2, 0, 3, 1]]), "Y": (y, [[1, 2, 0, 2]])}
        self.attrs = {"ref_level": -1}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, x_lengths = inputs["X"] if isinstance(inputs["X"], tuple) else (inputs["X"], None)
        _, y_lengths = inputs["Y"]
        out, lengths = expand_reference_arrays(x, x_lengths, y_lengths, attrs["ref_level"])
        return {"Out": (out, lengths) if lengths is not None else out}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestSequenceExpandNoLoD(TestSequenceExpand):
    """X without LoD: every row is one sequence."""

    def setUp(self):
        super().setUp()
        x = np.random.default_rng(6).uniform(-1, 1, (4, 3))
        self.inputs["X"] = x
        self.outputs = self.reference(self.inputs, self.attrs)


class TestSequenceExpandRefLevel0(TestSequenceExpand):
    """Y with two levels, expanding by the first."""

    def setUp(self):
        super().setUp()
        y = np.random.default_rng(7).uniform(-1, 1, (6, 1))
        self.inputs["Y"] = (y, [[2, 0, 1, 3], [1, 1, 2, 0, 1, 1]])
        self.attrs = {"ref_level": 0}
        self.outputs = self.reference(self.inputs, self.attrs)


@settings(max_examples=30, deadline=None)
@given(data=lod_tensors(dtypes=("float64",), feature_shape=(2,), num_sequences=(0, 6)),
       reps=lod_tensors(dtypes=("float64",), feature_shape=(1,), num_sequences=(6, 6),
                        max_len=3))
def test_expand_matches_loop(data, reps):
    from harness.backend.seam import make
    from harness.backend.case import normalize_slots

    x, lengths = data
    n = len(lengths[0])
    y_lengths = [reps[1][0][:n]]
    y = np.zeros((sum(y_lengths[0]), 1))
    p = make("sequence_expand", normalize_slots({"X": (x, lengths), "Y": (y, y_lengths)}),
                   {"ref_level": -1})
    outs = p.forward()
    want, want_lengths = expand_reference_arrays(x, lengths, y_lengths)
    np.testing.assert_array_equal(outs["Out"], want)
    assert p.lod_lengths("Out") == want_lengths
    grads = p.backward({"Out": np.ones_like(outs["Out"])}, ["X"])
    assert p.grad_lod("X") == lengths
    # d sum(Out) / d x = number of copies of x's sequence
    counts = np.repeat(np.asarray(y_lengths[0], dtype=float), lengths[0])
    np.testing.assert_allclose(grads["X"], np.broadcast_to(counts[:, None], x.shape))
