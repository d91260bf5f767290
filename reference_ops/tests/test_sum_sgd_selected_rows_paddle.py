"""Paddle 2.x's SelectedRows semantics of sum and sgd, through Paddle's scope API as the
compatibility mode gives it (a test holds the output's SelectedRows before the op runs):
sum merges rows (inputs without rows add nothing; int32 too), in place when Out is X[0];
sgd updates a SelectedRows Param at the positions of the Grad's rows in Param's rows."""
import numpy as np
import pytest

import opkit
from opkit.framework.tensor import SelectedRows


def _scope_with(**values):
    scope = opkit.Scope()
    for name, value in values.items():
        scope.var(name).set_value(value)
    return scope


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("inplace", [False, True])
def test_sum_merges_selected_rows_into_the_held_output(dtype, inplace):
    w = np.arange(8, dtype=dtype).reshape(4, 2)
    a = SelectedRows([2, 5, 7, 0], 10, w)
    b = SelectedRows([], 10, np.full((4, 2), 100, dtype))     # no rows: its value is unused
    c = SelectedRows([7, 2, 1, 9], 10, w + 1)
    scope = _scope_with(a=a, b=b, c=c)
    out_name = "a" if inplace else "out"
    held = a if inplace else SelectedRows()
    if not inplace:
        scope.var("out").set_value(held)
    opkit.create_op("sum", {"X": ["a", "b", "c"]}, {"Out": out_name}).run(
        scope, opkit.CPUPlace())
    assert scope.find_var(out_name).value() is held
    assert held.rows == [0, 1, 2, 5, 7, 9] and held.height == 10
    assert held.value.numpy().dtype == np.dtype(dtype)
    want = np.zeros((10, 2), dtype)
    np.add.at(want, [2, 5, 7, 0], w)
    np.add.at(want, [7, 2, 1, 9], w + 1)
    np.testing.assert_array_equal(held.value.numpy(), want[[0, 1, 2, 5, 7, 9]])


def test_sum_of_selected_rows_without_rows_has_no_rows():
    scope = _scope_with(a=SelectedRows([], 4, np.ones((2, 3))), b=SelectedRows([], 4,
                                                                               np.ones((2, 3))))
    opkit.create_op("sum", {"X": ["a", "b"]}, {"Out": "out"}).run(scope, opkit.CPUPlace())
    out = scope.find_var("out").value()
    assert isinstance(out, SelectedRows) and out.rows == [] and out.height == 4


def test_sum_rejects_values_that_do_not_match_rows():
    scope = _scope_with(a=SelectedRows([1, 2], 4, np.ones((3, 2))))
    with pytest.raises(opkit.EnforceNotMet, match="has 2 rows but a value of shape"):
        opkit.create_op("sum", {"X": ["a"]}, {"Out": "out"}).run(scope, opkit.CPUPlace())


def _sgd(param, grad, lr=0.1, out="param"):
    scope = _scope_with(param=param, grad=grad,
                        lr=opkit.LoDTensor(np.array([lr], param.value.numpy().dtype)))
    opkit.create_op("sgd", {"Param": "param", "Grad": "grad", "LearningRate": "lr"},
                    {"ParamOut": out}).run(scope, opkit.CPUPlace())
    return scope


def test_sgd_updates_a_selected_rows_param_in_place_by_row_position():
    w = np.arange(24, dtype="float32").reshape(4, 6)
    param = SelectedRows([9, 2, 5, 0], 12, w.copy())          # height 12, 4 stored rows
    g = np.ones((3, 6), "float32")
    g[1] *= 4
    grad = SelectedRows([5, 9, 5], 20, g)                        # row 5 twice, other height
    held = param.value
    _sgd(param, grad)
    want = w.copy()
    want[2] -= np.float32(0.1) * g[0]
    want[2] -= np.float32(0.1) * g[2]
    want[0] -= np.float32(0.1) * g[1]
    assert param.value is held and param.rows == [9, 2, 5, 0] and param.height == 12
    np.testing.assert_array_equal(held.numpy(), want)


def test_sgd_selected_rows_param_rejects_a_grad_row_it_does_not_hold():
    param = SelectedRows([1, 3], 4, np.ones((2, 2), "float32"))
    grad = SelectedRows([2], 4, np.ones((1, 2), "float32"))
    with pytest.raises(opkit.EnforceNotMet, match="row 2 .* not one of the rows"):
        _sgd(param, grad)


def test_sgd_selected_rows_param_needs_a_selected_rows_grad():
    param = SelectedRows([1, 3], 4, np.ones((2, 2), "float32"))
    with pytest.raises(opkit.EnforceNotMet, match="Grad must be SelectedRows too"):
        _sgd(param, opkit.LoDTensor(np.ones((4, 2), "float32")))
