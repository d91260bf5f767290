"""Helpers shared by array_write / array_read (not an op module)."""
from __future__ import annotations

from opkit import LoDTensorArray, enforce, errors

ARRAY_DTYPES = ("float32", "float64", "int32", "int64", "bool")


def check_index_dims(ctx, op_name: str) -> None:
    dims = list(ctx.get_input_dim("I"))
    n = 1
    for d in dims:
        n = -1 if (d < 0 or n < 0) else n * d
    enforce(n in (1, -1), errors.InvalidArgument(
        "Input(I) of %s should hold exactly one element (an int64 index), but its shape "
        "is %s.", op_name, dims))


def read_index(ctx, op_name: str) -> int:
    """The int value of Input(I), checked to be a one-element integer tensor >= 0."""
    tensor = ctx.input_tensor("I")
    data = tensor.data
    enforce(data.dtype.kind in "iu", errors.InvalidArgument(
        "Input(I) of %s should be an integer tensor (int64), but it is %s.", op_name,
        data.dtype))
    enforce(data.size == 1, errors.InvalidArgument(
        "Input(I) of %s should hold exactly one element, but its shape is %s.", op_name,
        list(data.shape)))
    i = int(data.reshape(-1)[0])
    enforce(i >= 0, errors.OutOfRange("Input(I) of %s should be >= 0, but it is %d.", op_name,
                                      i))
    return i


def array_of(var, name: str, op_name: str, create: bool) -> LoDTensorArray:
    """The LoDTensorArray a variable holds (made in place of an empty value when `create`)."""
    value = var.value()
    if isinstance(value, LoDTensorArray):
        return value
    if create and (value is None or not var.is_initialized()):
        value = LoDTensorArray()
        var.set_value(value)
        return value
    raise errors.InvalidArgument("%s: variable '%s' should hold a LoDTensorArray, but it holds "
                                 "%s.", op_name, name, type(value).__name__)
