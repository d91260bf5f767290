import numpy as np
import pytest
from hypothesis import given, settings

from harness import OpTest
from harness.inputs.strategies import lod_tensors


def pad_reference(x, lengths, pad_value, padded_length=-1):
    last = lengths[-1]
    longest = max(last, default=0)
    width = longest if padded_length == -1 else padded_length
    if width < longest:
        raise ValueError(f"padded_length {padded_length} < longest sequence {longest}")
    pad = np.broadcast_to(np.asarray(pad_value, dtype=x.dtype).reshape(
        () if np.size(pad_value) == 1 else x.shape[1:]), x.shape[1:])
    out = np.empty((len(last), width) + x.shape[1:], dtype=x.dtype)
    out[...] = pad
    start = 0
    for i, n in enumerate(last):
        out[i, :n] = x[start:start + n]
        start += n
    return out, np.asarray(last, dtype=np.int64)


class TestSequencePad(OpTest):
    lengths = [[3, 0, 1, 2]]
    padded_length = -1

    def setUp(self):
        self.op_type = "sequence_pad"
        rng = np.random.default_rng(17)
        x = rng.uniform(-1, 1, (sum(self.lengths[-1]), 2, 3))
        self.inputs = {"X": (x, self.lengths), "PadValue": self.pad_value(x)}
        self.attrs = {"padded_length": self.padded_length}
        self.outputs = self.reference(self.inputs, self.attrs)

    def pad_value(self, x):
        return np.array([0.5], dtype=x.dtype)

    def reference(self, inputs, attrs):
        x, lengths = inputs["X"]
        out, length = pad_reference(x, lengths, inputs["PadValue"], attrs["padded_length"])
        return {"Out": (out, [list(level) for level in lengths[:-1]]), "Length": length}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestSequencePadFixedLength(TestSequencePad):
    padded_length = 5


class TestSequencePadFeatureShapedValue(TestSequencePad):
    def pad_value(self, x):
        return np.arange(6, dtype=x.dtype).reshape(2, 3) - 2.5


class TestSequencePadLevel2(TestSequencePad):
    lengths = [[2, 2], [1, 0, 3, 2]]


@settings(max_examples=40, deadline=None)
@given(data=lod_tensors(dtypes=("float64",), feature_shape=(2,)))
def test_pad_unpad_roundtrip(data):
    from harness.backend.seam import make
    from harness.backend.case import normalize_slots

    x, lengths = data
    p = make("sequence_pad", normalize_slots({"X": (x, lengths),
                                                    "PadValue": np.array([-3.0])}), {})
    outs = p.forward()
    want, length = pad_reference(x, lengths, -3.0)
    np.testing.assert_array_equal(outs["Out"], want)
    np.testing.assert_array_equal(outs["Length"], length)
    assert outs["Length"].dtype == np.int64
    u = make("sequence_unpad", normalize_slots({"X": outs["Out"], "Length": length}), {})
    back = u.forward()
    np.testing.assert_array_equal(back["Out"], x)
    assert u.lod_lengths("Out") == lengths


def test_pad_rejects_short_padded_length():
    from harness.backend.seam import make
    from harness.backend.case import normalize_slots
    from opkit import EnforceNotMet

    p = make("sequence_pad", normalize_slots({"X": (np.ones((4, 2)), [[1, 3]]),
                                                    "PadValue": np.array([0.0])}),
                   {"padded_length": 2})
    with pytest.raises(EnforceNotMet, match="padded_length"):
        p.forward()


def test_pad_compile_time_lod_level():
    import opkit

    main = opkit.Program()
    block = main.global_block()
    block.create_var(name="x", shape=[-1, 3], dtype="float32", lod_level=0)
    block.create_var(name="v", shape=[1], dtype="float32")
    block.create_var(name="out")
    block.create_var(name="len")
    with pytest.raises(opkit.EnforceNotMet, match="LoD level of Input\\(X\\) of sequence_pad "
                                                  "must be at least 1, but it is 0 at compile"):
        block.append_op("sequence_pad", inputs={"X": "x", "PadValue": "v"},
                        outputs={"Out": "out", "Length": "len"})
