"""OpTests of the broken sequence_pool kernels (broken_sequence_pool_op.py). Their own
cases have no empty sequence, so `output` and `grad` pass; `lod` fails. Not collected by
pytest (tests/harness/test_lod_check.py imports them); for `opkit test`:

    opkit test broken_sequence_pool_reduceat broken_sequence_pool_last \
        --ops tests/broken_ops/broken_sequence_pool_op.py \
        --tests tests/broken_ops/broken_sequence_pool_optests.py
"""
import numpy as np

from harness import OpTest


def _pool(x, lengths, pooltype, pad_value=0.0):
    out = np.full((len(lengths[-1]),) + x.shape[1:], pad_value, dtype=x.dtype)
    start = 0
    for i, n in enumerate(lengths[-1]):
        if n:
            seq = x[start:start + n]
            out[i] = seq.sum(axis=0) if pooltype == "SUM" else seq[-1]
        start += n
    return out


class TestBrokenSequencePoolReduceat(OpTest):
    op = "broken_sequence_pool_reduceat"
    pooltype = "SUM"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(31).uniform(-1, 1, (6, 3))
        self.inputs = {"X": (x, [[2, 3, 1]])}       # no empty sequence
        self.attrs = {"pooltype": self.pooltype}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, lengths = inputs["X"]
        return {"Out": (_pool(x, lengths, attrs["pooltype"], attrs.get("pad_value", 0.0)),
                        [list(level) for level in lengths[:-1]])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestBrokenSequencePoolLast(TestBrokenSequencePoolReduceat):
    op = "broken_sequence_pool_last"
    pooltype = "LAST"


class TestGoodSequencePoolSum(TestBrokenSequencePoolReduceat):
    """The real sequence_pool on the same tests: passes `lod`."""
    op = "sequence_pool"


class TestGoodSequencePoolLast(TestBrokenSequencePoolReduceat):
    op = "sequence_pool"
    pooltype = "LAST"
