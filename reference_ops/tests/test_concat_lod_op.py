"""concat on axis 0 of LoD inputs: Out's LoD is the concatenation of the inputs' LoDs."""
import numpy as np
import pytest
from harness import OpTest

from opkit import errors
from reference_ops.concat_op import concat_lod


class TestConcatLoDAxis0(OpTest):
    def setUp(self):
        self.op_type = "concat"
        rng = np.random.default_rng(2701)
        lens = [[2, 0, 3], [1, 4]]
        xs = [rng.uniform(-1, 1, (sum(n), 3)) for n in lens]
        self.inputs = {"X": [("x%d" % i, (a, [n])) for i, (a, n) in enumerate(zip(xs, lens))]}
        self.attrs = {"axis": 0}
        self.outputs = {"Out": (np.concatenate(xs, axis=0), [[2, 0, 3, 1, 4]])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["x0", "x1"], "Out")


class TestConcatLoDAxis1KeepsFirst(OpTest):
    """On another axis the rows line up: Out keeps X_0's LoD."""

    def setUp(self):
        self.op_type = "concat"
        rng = np.random.default_rng(2702)
        xs = [rng.uniform(-1, 1, (5, k)) for k in (2, 3)]
        self.inputs = {"X": [("x0", (xs[0], [[2, 3]])), ("x1", (xs[1], [[2, 3]]))]}
        self.attrs = {"axis": 1}
        self.outputs = {"Out": (np.concatenate(xs, axis=1), [[2, 3]])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["x0", "x1"], "Out")


def test_concat_lod_two_levels():
    a = [[0, 2, 3], [0, 1, 3, 6]]
    b = [[0, 1], [0, 2]]
    assert concat_lod([a, b]) == [[0, 2, 3, 4], [0, 1, 3, 6, 8]]


def test_concat_lod_missing_lod_keeps_first():
    assert concat_lod([[[0, 2]], []]) is None


def test_concat_lod_level_mismatch_is_a_clear_error():
    with pytest.raises(errors.InvalidArgument, match="X\\[1\\]"):
        concat_lod([[[0, 2]], [[0, 1], [0, 1]]])
