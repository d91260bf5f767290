import numpy as np
import pytest

import opkit
from harness import OpTest


def _top_k(x, k):
    # NaN ranks above every number (PyTorch's topk, Paddle's top_k), then descending
    order = np.lexsort((-x, ~np.isnan(x)), axis=-1)[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype("int64")


class TestTopKOp(OpTest):
    def setUp(self):
        self.op_type = "top_k"
        rng = np.random.default_rng(1501)
        # distinct values 0.01 apart: the numeric gradient never swaps the order
        x = rng.permutation(200).reshape(10, 20).astype("float64") * 0.01
        self.inputs = {"X": x}
        self.attrs = {"k": 4}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        values, indices = _top_k(inputs["X"], attrs["k"])
        return {"Out": values, "Indices": indices}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestTopKOp3D(TestTopKOp):
    def setUp(self):
        self.op_type = "top_k"
        rng = np.random.default_rng(1502)
        x = rng.permutation(120).reshape(2, 6, 10).astype("float64") * 0.01
        self.inputs = {"X": x}
        self.attrs = {"k": 1}
        self.outputs = self.reference(self.inputs, self.attrs)


def test_top_k_ties_keep_lower_index_first():
    x = np.array([[1.0, 3.0, 3.0, 2.0, 3.0]], dtype="float32")
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        xv = opkit.layers.data("x", shape=[5], dtype="float32")
        values, indices = opkit.layers.top_k(xv, k=3)
    out, idx = opkit.Executor().run(main, feed={"x": x}, fetch_list=[values, indices],
                                    scope=opkit.Scope())
    np.testing.assert_array_equal(idx, [[1, 2, 4]])
    np.testing.assert_array_equal(out, [[3.0, 3.0, 3.0]])
    assert idx.dtype == np.int64


def test_top_k_k_larger_than_last_dim_is_refused():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        xv = opkit.layers.data("x", shape=[5], dtype="float32")
        with pytest.raises(opkit.EnforceNotMet, match="Attr\\(k\\)"):
            opkit.layers.top_k(xv, k=6)


def test_top_k_ranks_nan_above_every_number():
    """As PyTorch's topk and Paddle's top_k: a NaN is the largest (an opkit op that ranked it
    below every number disagreed with Paddle's kernel under `--backend paddle`)."""
    x = np.array([[1.0, np.nan, np.inf, 2.0, np.nan]], dtype="float64")
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        xv = opkit.layers.data("x", shape=[5], dtype="float64")
        values, indices = opkit.layers.top_k(xv, k=4)
    out, idx = opkit.Executor().run(main, feed={"x": x}, fetch_list=[values, indices],
                                    scope=opkit.Scope())
    assert idx.tolist() == [[1, 4, 2, 3]]
    assert np.isnan(out[0, :2]).all() and out[0, 2:].tolist() == [np.inf, 2.0]
