"""lookup_table with Ids of rank > 2 ([..., 1]): Out is [..., D], as in Paddle."""
import numpy as np
from harness import OpTest


class TestLookupTableIdsRank4(OpTest):
    padding_idx = -1

    def setUp(self):
        self.op_type = "lookup_table"
        rng = np.random.default_rng(3301)
        w = rng.uniform(-1, 1, (17, 6))
        ids = rng.integers(0, 17, (2, 3, 4, 1)).astype("int64")
        out = w[ids[..., 0]]
        if self.padding_idx >= 0:
            ids.reshape(-1)[:3] = self.padding_idx
            out = w[ids[..., 0]]
            out[ids[..., 0] == self.padding_idx] = 0
        self.inputs = {"W": w, "Ids": ids}
        self.attrs = {"padding_idx": self.padding_idx}
        self.outputs = {"Out": out}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["W"], "Out", no_grad_set={"Ids"})


class TestLookupTableIdsRank4Padding(TestLookupTableIdsRank4):
    padding_idx = 5


class TestLookupTableInt8Table(OpTest):
    """An int8 table (quantized embedding): forward only, Out is int8."""

    def setUp(self):
        self.op_type = "lookup_table"
        rng = np.random.default_rng(3302)
        w = rng.integers(-128, 127, (17, 6)).astype("int8")
        ids = rng.integers(0, 17, (5, 1)).astype("int64")
        self.inputs = {"W": w, "Ids": ids}
        self.attrs = {"padding_idx": int(ids[2, 0])}
        out = w[ids[:, 0]].copy()
        out[ids[:, 0] == ids[2, 0]] = 0
        self.outputs = {"Out": out}

    def test_check_output(self):
        self.check_output()
