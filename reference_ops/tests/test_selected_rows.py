"""SelectedRows end to end: lookup_table's sparse gradient, sgd on it, sum over it."""
import numpy as np
import pytest

import opkit
from opkit import layers


def test_selected_rows_basics():
    value = np.arange(6, dtype="float32").reshape(3, 2)
    sr = opkit.SelectedRows([4, 1, 4], 6, value)
    assert sr.get_complete_dims() == (6, 2)
    dense = sr.to_dense()
    assert dense.shape == (6, 2)
    np.testing.assert_array_equal(dense[4], value[0] + value[2])
    np.testing.assert_array_equal(dense[1], value[1])
    assert dense[[0, 2, 3, 5]].sum() == 0
    with pytest.raises(opkit.EnforceNotMet, match="outside"):
        opkit.SelectedRows([6], 6, value[:1])


def _embedding_program(is_sparse, lr=0.5):
    main, startup = opkit.Program(), opkit.Program()
    startup.random_seed = 11
    with opkit.program_guard(main, startup):
        ids = layers.data("ids", shape=[1], dtype="int64")
        emb = layers.embedding(ids, [8, 3], is_sparse=is_sparse, name="table")
        loss = layers.mean(layers.square(emb))
        opkit.optimizer.SGD(learning_rate=lr).minimize(loss)
    return main, startup, loss


def test_sparse_and_dense_sgd_steps_agree():
    """Duplicate ids: the sparse gradient repeats rows, sgd merges them before updating."""
    ids = np.array([[2], [5], [2], [2], [7]], dtype="int64")
    results = {}
    for is_sparse in (False, True):
        main, startup, loss = _embedding_program(is_sparse)
        exe, scope = opkit.Executor(), opkit.Scope()
        exe.run(startup, scope=scope)
        before = scope.find_var("table").get_tensor().numpy().copy()
        (grad,) = exe.run(main, feed={"ids": ids}, fetch_list=["table@GRAD"], scope=scope)
        after = scope.find_var("table").get_tensor().numpy()
        results[is_sparse] = (before, grad, after)
    np.testing.assert_array_equal(results[False][0], results[True][0])
    np.testing.assert_allclose(results[True][1], results[False][1], rtol=1e-6)   # dense view
    np.testing.assert_allclose(results[True][2], results[False][2], rtol=1e-6)
    before, _, after = results[True]
    untouched = [0, 1, 3, 4, 6]
    np.testing.assert_array_equal(after[untouched], before[untouched])


def test_sparse_grad_variable_holds_selected_rows():
    main, startup, _ = _embedding_program(True)
    exe, scope = opkit.Executor(), opkit.Scope()
    exe.run(startup, scope=scope)
    ids = np.array([[1], [3], [1]], dtype="int64")
    (sr,) = exe.run(main, feed={"ids": ids}, fetch_list=["table@GRAD"], scope=scope,
                    return_numpy=False)
    assert isinstance(sr, opkit.SelectedRows)
    assert sr.rows == [1, 3, 1] and sr.height == 8
    assert sr.value.shape == (3, 3)


def _run_sum(values):
    scope = opkit.Scope()
    names = []
    for k, v in enumerate(values):
        scope.var(f"x{k}").set_value(v)
        names.append(f"x{k}")
    op = opkit.create_op("sum", {"X": names}, {"Out": "out"})
    op.run(scope, opkit.CPUPlace())
    return scope.find_var("out").value()


def test_sum_of_selected_rows_merges_rows():
    """Paddle's MergeAdd: the sorted distinct rows, each row's values summed."""
    a = opkit.SelectedRows([3, 0], 5, np.array([[1.0, 2.0], [3.0, 4.0]]))
    b = opkit.SelectedRows([3, 4], 5, 2 * np.ones((2, 2), "float64"))
    out = _run_sum([a, b])
    assert isinstance(out, opkit.SelectedRows)
    assert out.rows == [0, 3, 4] and out.height == 5
    np.testing.assert_array_equal(out.value.numpy(), [[3.0, 4.0], [3.0, 4.0], [2.0, 2.0]])
    np.testing.assert_array_equal(out.to_dense(), a.to_dense() + b.to_dense())


def test_sum_of_dense_and_selected_rows_is_dense():
    a = opkit.LoDTensor(np.ones((5, 2), "float64"))
    b = opkit.SelectedRows([1, 1], 5, np.ones((2, 2), "float64"))
    out = _run_sum([a, b])
    assert isinstance(out, opkit.LoDTensor)
    np.testing.assert_array_equal(out.numpy(), np.ones((5, 2)) + b.to_dense())


def test_shared_sparse_embedding_grads_are_summed():
    """Two lookups of one table: backward sums two SelectedRows gradients."""
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        a = layers.data("a", shape=[1], dtype="int64")
        b = layers.data("b", shape=[1], dtype="int64")
        ea = layers.embedding(a, [6, 2], is_sparse=True, name="shared")
        eb = layers.embedding(b, [6, 2], is_sparse=True, name="shared")
        loss = layers.mean(layers.elementwise_add(ea, eb))
        opkit.optimizer.SGD(learning_rate=1.0).minimize(loss)
    exe, scope = opkit.Executor(), opkit.Scope()
    exe.run(startup, scope=scope)
    before = scope.find_var("shared").get_tensor().numpy().copy()
    exe.run(main, feed={"a": np.array([[1]], "int64"), "b": np.array([[1]], "int64")},
            scope=scope)
    after = scope.find_var("shared").get_tensor().numpy()
    np.testing.assert_allclose(before[1] - after[1], [1.0, 1.0], rtol=1e-6)  # 2 x 1/2 each
