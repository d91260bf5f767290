import numpy as np
import pytest

import opkit
from harness import OpTest
from opkit import grad_var_name


class TestLookupTableOp(OpTest):
    def setUp(self):
        self.op_type = "lookup_table"
        rng = np.random.default_rng(1601)
        self.inputs = {"W": rng.uniform(-1, 1, (17, 31)).astype("float64"),
                       "Ids": rng.integers(0, 17, (40, 1)).astype("int64")}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        w, ids = inputs["W"], inputs["Ids"].reshape(-1)
        out = w[ids].copy()
        padding_idx = attrs.get("padding_idx", -1)
        if padding_idx != -1:
            out[ids == padding_idx] = 0
        return {"Out": out}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["W"], "Out", no_grad_set={"Ids"})


class TestLookupTablePadding(TestLookupTableOp):
    def setUp(self):
        super().setUp()
        self.inputs["Ids"][::3] = 5
        self.attrs = {"padding_idx": 5}
        self.outputs = self.reference(self.inputs, self.attrs)


def _run_grad(w, ids, dout, is_sparse, padding_idx=-1):
    """lookup_table_grad run directly: the W@GRAD variable's value."""
    scope = opkit.Scope()
    scope.var("W").set_value(opkit.LoDTensor(w))
    scope.var("Ids").set_value(opkit.LoDTensor(ids))
    scope.var("Out@GRAD").set_value(opkit.LoDTensor(dout))
    op = opkit.create_op("lookup_table_grad",
                         {"W": "W", "Ids": "Ids", grad_var_name("Out"): "Out@GRAD"},
                         {grad_var_name("W"): "W@GRAD"},
                         {"is_sparse": is_sparse, "padding_idx": padding_idx})
    op.run(scope, opkit.CPUPlace())
    return scope.find_var("W@GRAD").value()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_grad_is_selected_rows(dtype):
    rng = np.random.default_rng(1602)
    w = rng.uniform(-1, 1, (12, 8)).astype(dtype)
    ids = np.array([[3], [7], [3], [0], [11]], dtype="int64")
    dout = rng.uniform(-1, 1, (5, 8)).astype(dtype)
    sr = _run_grad(w, ids, dout, True)
    assert isinstance(sr, opkit.SelectedRows)
    assert sr.rows == [3, 7, 3, 0, 11]
    assert sr.height == 12
    assert sr.get_complete_dims() == (12, 8)
    np.testing.assert_array_equal(sr.value.numpy(), dout)
    dense = _run_grad(w, ids, dout, False)
    assert isinstance(dense, opkit.LoDTensor)
    np.testing.assert_allclose(sr.to_dense(), dense.numpy(), rtol=1e-6)
    expected = np.zeros_like(w)
    np.add.at(expected, ids.reshape(-1), dout)
    np.testing.assert_allclose(dense.numpy(), expected, rtol=1e-6)


def test_sparse_grad_zeroes_padding_rows():
    w = np.ones((6, 3), dtype="float64")
    ids = np.array([[1], [2], [1]], dtype="int64")
    dout = np.ones((3, 3), dtype="float64")
    sr = _run_grad(w, ids, dout, True, padding_idx=1)
    np.testing.assert_array_equal(sr.value.numpy(), [[0, 0, 0], [1, 1, 1], [0, 0, 0]])
    dense = _run_grad(w, ids, dout, False, padding_idx=1).numpy()
    assert dense[1].sum() == 0 and dense[2].sum() == 3


def test_ids_out_of_range_is_an_error():
    scope = opkit.Scope()
    scope.var("W").set_value(opkit.LoDTensor(np.zeros((4, 2), dtype="float32")))
    scope.var("Ids").set_value(opkit.LoDTensor(np.array([[4]], dtype="int64")))
    op = opkit.create_op("lookup_table", {"W": "W", "Ids": "Ids"}, {"Out": "Out"})
    with pytest.raises(opkit.EnforceNotMet, match=r"\[0, 4\)"):
        op.run(scope, opkit.CPUPlace())


def test_kernel_dtype_comes_from_w():
    scope = opkit.Scope()
    scope.var("W").set_value(opkit.LoDTensor(np.ones((4, 2), dtype="float32")))
    scope.var("Ids").set_value(opkit.LoDTensor(np.array([[1], [3]], dtype="int64")))
    op = opkit.create_op("lookup_table", {"W": "W", "Ids": "Ids"}, {"Out": "Out"})
    op.run(scope, opkit.CPUPlace())
    assert scope.find_var("Out").value().numpy().dtype == np.float32


def test_uninitialized_w_is_named():
    scope = opkit.Scope()
    scope.var("Ids").set_value(opkit.LoDTensor(np.array([[1]], dtype="int64")))
    op = opkit.create_op("lookup_table", {"W": "W", "Ids": "Ids"}, {"Out": "Out"})
    with pytest.raises(opkit.EnforceNotMet, match="W"):
        op.run(scope, opkit.CPUPlace())


@pytest.mark.parametrize("is_sparse", [False, True])
def test_embedding_trains_with_sgd(is_sparse):
    """sgd applies the (sparse or dense) gradient: the table approaches the targets."""
    rng = np.random.default_rng(1603)
    target = rng.normal(size=(10, 4)).astype("float32")
    main, startup = opkit.Program(), opkit.Program()
    startup.random_seed = 7
    with opkit.program_guard(main, startup):
        ids = opkit.layers.data("ids", shape=[1], dtype="int64")
        y = opkit.layers.data("y", shape=[4], dtype="float32")
        emb = opkit.layers.embedding(ids, [10, 4], is_sparse=is_sparse, name="emb")
        loss = opkit.layers.mean(opkit.layers.square_error_cost(emb, y))
        opkit.optimizer.SGD(learning_rate=1.0).minimize(loss)
    exe, scope = opkit.Executor(opkit.CPUPlace()), opkit.Scope()
    exe.run(startup, scope=scope)
    first = None
    for _ in range(300):
        idv = rng.integers(0, 10, (16, 1)).astype("int64")
        (value,) = exe.run(main, feed={"ids": idv, "y": target[idv[:, 0]]}, fetch_list=[loss],
                           scope=scope)
        first = float(value.reshape(-1)[0]) if first is None else first
    w = scope.find_var("emb").get_tensor().numpy()
    assert float(value.reshape(-1)[0]) < first / 100
    np.testing.assert_allclose(w, target, atol=0.05)
