"""The public contract, section 3. data."""
from __future__ import annotations

import numpy as np
import pytest

import opkit
from opkit import errors

from contract_helpers import assert_signature


# (section 4 below checks that errors raised while an op runs name the op)


def test_3_lod_tensor():
    assert_signature(opkit.LoDTensor.__init__, lambda self, data=None, lod=None, place=None: 0)
    assert opkit.Tensor is opkit.LoDTensor
    t = opkit.LoDTensor(np.zeros((5, 2)), [[0, 2, 2, 5]])
    assert t.lod == [[0, 2, 2, 5]] and t.recursive_sequence_lengths() == [[2, 0, 3]]
    assert t.has_valid_recursive_sequence_lengths()
    t.set_recursive_sequence_lengths([[1, 4]])
    assert t.lod == [[0, 1, 5]]
    t.set_lod([[0, 5]])
    assert t.recursive_sequence_lengths() == [[5]]
    assert t.shape == (5, 2) and t.dtype == np.float64 and t.place == opkit.CPUPlace()
    assert isinstance(t.data, np.ndarray)
    with pytest.raises(errors.EnforceNotMet):
        t.set_lod([[0, 2, 4]])                       # the last offset must be the row count
    empty = opkit.LoDTensor()
    assert empty.lod == []


def test_3_selected_rows_and_tensor_array():
    assert_signature(opkit.SelectedRows.__init__, lambda self, rows=None, height=0, value=None:
                     0)
    sr = opkit.SelectedRows([0, 3], 10, np.ones((2, 4)))
    assert tuple(sr.get_complete_dims()) == (10, 4)
    sr2 = opkit.SelectedRows(rows=[1], height=5, value=opkit.LoDTensor(np.ones((1, 2))))
    assert tuple(sr2.get_complete_dims()) == (5, 2)
    arr = opkit.LoDTensorArray()
    assert isinstance(arr, list)
    arr.append(opkit.LoDTensor(np.ones(2)))
    assert len(arr) == 1


def test_3_variable_and_scope():
    parent = opkit.Scope()
    v = parent.var("w")
    assert isinstance(v, opkit.Variable) and parent.var("w") is v
    v.get_tensor().set(np.ones(2))
    kid = parent.new_scope()
    assert kid.find_var("w") is v                    # falls through to the parent
    assert kid.find_var("nothing") is None
    kv = kid.var("k")
    assert parent.find_var("k") is None and kid.find_var("k") is kv
    parent.drop_kids()
    for value in (opkit.LoDTensor(np.ones(1)), opkit.SelectedRows([0], 1, np.ones((1, 1))),
                  opkit.LoDTensorArray()):
        var = opkit.Variable("x")
        var.set_value(value)
        assert var.value() is value


def test_3_places():
    assert opkit.CPUPlace() == opkit.CPUPlace()
    assert_signature(opkit.CUDAPlace.__init__, lambda self, device_id=0: 0)
    assert opkit.CUDAPlace().device_id == 0 and opkit.CUDAPlace(1).device_id == 1
    assert opkit.CUDAPlace(0) != opkit.CPUPlace()
