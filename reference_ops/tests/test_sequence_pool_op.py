"""sequence_pool: OpTests (with a per-sequence loop reference, so `opkit test` also runs the
LoD edge cases) and hypothesis property tests."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import OpTest
from harness.inputs.strategies import lod_tensors


def pool_reference(x, lengths, pooltype, pad_value=0.0):
    """Per-sequence loop: (Out, MaxIndex) for the last level of `lengths`."""
    last = lengths[-1]
    out = np.full((len(last),) + x.shape[1:], pad_value, dtype=x.dtype)
    index = np.full((len(last),) + x.shape[1:], -1, dtype=np.int32)
    start = 0
    for i, n in enumerate(last):
        seq = x[start:start + n]
        if n:
            if pooltype == "SUM":
                out[i] = seq.sum(axis=0)
            elif pooltype == "AVERAGE":
                out[i] = seq.sum(axis=0) / n
            elif pooltype == "SQRT":
                out[i] = seq.sum(axis=0) / np.sqrt(n)
            elif pooltype == "MAX":
                out[i] = seq.max(axis=0)
                index[i] = start + seq.argmax(axis=0)
            elif pooltype == "LAST":
                out[i] = seq[-1]
            elif pooltype == "FIRST":
                out[i] = seq[0]
        start += n
    return out, index


class TestSequencePoolSum(OpTest):
    pooltype = "SUM"
    lengths = [[4, 0, 3, 1, 0]]
    pad_value = 0.0

    def setUp(self):
        self.op_type = "sequence_pool"
        rows = sum(self.lengths[-1])
        x = np.random.default_rng(3).uniform(0.1, 1.0, (rows, 5)).astype("float64")
        self.inputs = {"X": (x, self.lengths)}
        self.attrs = {"pooltype": self.pooltype, "pad_value": self.pad_value}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, lengths = inputs["X"]
        out, index = pool_reference(x, lengths, attrs["pooltype"], attrs.get("pad_value", 0.0))
        outs = {"Out": (out, [list(level) for level in lengths[:-1]])}
        if attrs["pooltype"] == "MAX" and not attrs.get("is_test", False):
            outs["MaxIndex"] = index
        return outs

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestSequencePoolAverage(TestSequencePoolSum):
    pooltype = "AVERAGE"


class TestSequencePoolSqrt(TestSequencePoolSum):
    pooltype = "SQRT"


class TestSequencePoolMax(TestSequencePoolSum):
    pooltype = "MAX"
    pad_value = -7.5


class TestSequencePoolLast(TestSequencePoolSum):
    pooltype = "LAST"
    lengths = [[2, 3, 0]]       # an empty last sequence


class TestSequencePoolFirst(TestSequencePoolSum):
    pooltype = "FIRST"
    lengths = [[0, 2, 3]]


class TestSequencePoolLevel2(TestSequencePoolSum):
    """Two LoD levels: pools the last one; Out keeps the first."""
    lengths = [[2, 0, 2], [3, 0, 1, 0]]


class TestSequencePoolAllEmpty(TestSequencePoolSum):
    """0 rows, 3 empty sequences (Paddle rejects this; opkit pads)."""
    pooltype = "MAX"
    lengths = [[0, 0, 0]]
    pad_value = 1.5


class TestSequencePoolFewerRowsThanSequences(TestSequencePoolSum):
    pooltype = "AVERAGE"
    lengths = [[0, 1, 0, 0, 1, 0]]
    pad_value = 0.25


class TestSequencePoolMaxIsTest(TestSequencePoolSum):
    pooltype = "MAX"

    def setUp(self):
        super().setUp()
        self.attrs["is_test"] = True
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_grad(self):
        pass   # inference only: no MaxIndex, no gradient


@settings(max_examples=40, deadline=None)
@given(data=lod_tensors(dtypes=("float64",), feature_shape=(3,), num_sequences=(0, 8),
                        p_empty=0.4, max_len=5),
       pooltype=st.sampled_from(["SUM", "AVERAGE", "SQRT", "MAX", "LAST", "FIRST"]),
       pad_value=st.sampled_from([0.0, -1.0, 2.5]))
def test_pool_matches_loop(data, pooltype, pad_value):
    from harness.backend.seam import make
    from harness.backend.case import normalize_slots

    x, lengths = data
    p = make("sequence_pool", normalize_slots({"X": (x, lengths)}),
                   {"pooltype": pooltype, "pad_value": pad_value})
    outs = p.forward()
    want, index = pool_reference(x, lengths, pooltype, pad_value)
    np.testing.assert_allclose(outs["Out"], want, rtol=1e-12, atol=1e-12)
    if pooltype == "MAX":
        np.testing.assert_array_equal(outs["MaxIndex"], index)
    # gradient of sum(Out): every row of a sequence gets d pool / d row; LoD kept
    grads = p.backward({"Out": np.ones_like(outs["Out"])}, ["X"])
    assert p.grad_lod("X") == [list(level) for level in lengths]
    assert grads["X"].shape == x.shape


def test_pool_rejects_input_without_lod():
    from harness.backend.seam import make
    from harness.backend.case import normalize_slots
    from opkit import EnforceNotMet

    p = make("sequence_pool", normalize_slots({"X": np.ones((3, 2))}), {"pooltype": "SUM"})
    with pytest.raises(EnforceNotMet, match="LoD level of Input\\(X\\) of sequence_pool must be "
                                            "at least 1, but it is 0 at run time"):
        p.forward()
