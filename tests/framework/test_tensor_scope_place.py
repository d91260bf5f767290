import numpy as np
import pytest

import opkit
from opkit import errors
from opkit.framework.device import DeviceContextPool
from opkit.framework.place import cupy_unavailable_reason


def test_lod_offsets_and_lengths():
    t = opkit.LoDTensor(np.zeros((5, 2)))
    t.set_recursive_sequence_lengths([[2, 0, 3]])
    assert t.lod == [[0, 2, 2, 5]]
    assert t.recursive_sequence_lengths() == [[2, 0, 3]]
    assert t.has_valid_recursive_sequence_lengths()
    assert opkit.Tensor is opkit.LoDTensor


def test_two_level_lod():
    t = opkit.LoDTensor(np.zeros((6, 1)), lod=[[0, 2, 3], [0, 1, 1, 6]])
    assert t.recursive_sequence_lengths() == [[2, 1], [1, 0, 5]]


@pytest.mark.parametrize("lod,fragment", [
    ([[0, 3, 2, 5]], "non-decreasing"),
    ([[0, 2, 4]], "last LoD offset (4) must equal the number of rows of the tensor (5)"),
    ([[1, 5]], "must start at offset 0"),
    ([[0, 1, 3], [0, 2, 5]], "levels are inconsistent"),
    ([[]], "non-empty list"),
])
def test_lod_validation_says_what_is_wrong(lod, fragment):
    t = opkit.LoDTensor(np.zeros((5, 1)))
    with pytest.raises(errors.InvalidArgument) as info:
        t.set_lod(lod)
    assert fragment in str(info.value)


def test_negative_lengths_refused():
    t = opkit.LoDTensor(np.zeros((1, 1)))
    with pytest.raises(errors.InvalidArgument, match=">= 0"):
        t.set_recursive_sequence_lengths([[2, -1]])


def test_uninitialized_tensor_says_so():
    t = opkit.LoDTensor()
    assert not t.is_initialized()
    with pytest.raises(errors.PreconditionNotMet, match="not initialized"):
        _ = t.shape


def test_meta_only_tensor_keeps_shape_dtype_lod_but_no_data():
    t = opkit.LoDTensor.meta_only((3, 2), "float32", [[0, 1, 3]], reason="X is no_need_buffer")
    assert t.shape == (3, 2) and t.dtype == np.float32 and t.lod == [[0, 1, 3]]
    with pytest.raises(errors.PreconditionNotMet, match="no_need_buffer"):
        _ = t.data


def test_selected_rows():
    sr = opkit.SelectedRows([0, 2, 2], height=4, value=np.ones((3, 2)))
    assert sr.get_complete_dims() == (4, 2)
    np.testing.assert_array_equal(sr.to_dense(), [[1, 1], [0, 0], [2, 2], [0, 0]])
    with pytest.raises(errors.OutOfRange):
        opkit.SelectedRows([7], height=4, value=np.ones((1, 2)))


def test_lod_tensor_array_is_a_list():
    arr = opkit.LoDTensorArray()
    arr.append(opkit.LoDTensor(np.ones(2)))
    assert isinstance(arr, list) and len(arr) == 1


def test_scope_hierarchy_lookups_fall_through():
    root = opkit.Scope()
    root.var("w").get_tensor().set(np.ones(2))
    kid = root.new_scope()
    assert kid.find_var("w") is root.find_var("w")
    kid.var("tmp")
    assert root.find_var("tmp") is None
    assert kid.find_local_var("w") is None
    root.drop_kids()
    assert root.kids() == []


def test_variable_type_errors_name_the_variable():
    v = opkit.Variable("ids")
    v.get_selected_rows()
    with pytest.raises(errors.InvalidArgument, match="'ids'"):
        v.get_tensor()


def test_places():
    assert opkit.CPUPlace() == opkit.CPUPlace()
    assert opkit.CUDAPlace(0) != opkit.CUDAPlace(1)
    assert hash(opkit.CUDAPlace(1)) == hash(opkit.CUDAPlace(1))
    with pytest.raises(errors.InvalidArgument):
        opkit.CUDAPlace(-1)
    count = opkit.cuda_device_count()
    assert isinstance(count, int) and count >= 0


def test_device_context_pool_one_context_per_place():
    pool = DeviceContextPool.instance()
    assert pool.get(opkit.CPUPlace()) is pool.get(opkit.CPUPlace())
    assert pool.get(opkit.CPUPlace()).xp is np


def test_cuda_context_unavailable_says_why():
    reason = cupy_unavailable_reason()
    if reason is None:
        pytest.skip("a CUDA device is usable here")
    with pytest.raises(errors.Unavailable, match=reason):
        DeviceContextPool.instance().get(opkit.CUDAPlace(0))
    assert opkit.is_compiled_with_cuda() == (reason != "cupy is not installed")
