"""Paddle's `core.Scope` / `Variable` / `LoDTensor` / `SelectedRows` Python API on opkit's
framework objects (what Paddle's tests use with `op.Operator`): a test fills variables of a
scope, runs an opkit op by name on it and reads the outputs back."""
from __future__ import annotations

import numpy as np

from opkit_paddle.optest_surface import as_bfloat16, as_uint16
from opkit.framework import scope as _scope
from opkit.framework import tensor as _tensor


def _vartype(dtype):
    from paddle.fluid.framework import convert_np_dtype_to_dtype_

    return convert_np_dtype_to_dtype_(dtype)


class LoDTensor:
    """Paddle's LoDTensor (DenseTensor in 3.x) around an opkit LoDTensor."""

    def __init__(self, _inner: _tensor.LoDTensor | None = None):
        self._t = _inner if _inner is not None else _tensor.LoDTensor()
        self._dims = None

    def set(self, array, place=None):
        # Paddle's convention: a uint16 array is bfloat16 data (its bits)
        self._t.set(as_bfloat16(np.array(array)), place)

    def shape(self) -> list:
        if not self._t.is_initialized():
            return list(self._dims or [])
        return list(self._t.shape)

    def _get_dims(self):
        return self.shape()

    def _set_dims(self, dims):
        self._dims = list(dims)

    def _dtype(self):
        return _vartype(self._t.dtype)

    def _is_initialized(self) -> bool:
        return self._t.is_initialized()

    def set_lod(self, lod):
        self._t.set_lod(lod)

    def lod(self):
        return [list(level) for level in self._t.lod]

    def set_recursive_sequence_lengths(self, lengths):
        self._t.set_recursive_sequence_lengths(lengths)

    def recursive_sequence_lengths(self):
        return self._t.recursive_sequence_lengths()

    def has_valid_recursive_sequence_lengths(self) -> bool:
        return self._t.has_valid_recursive_sequence_lengths()

    def _element(self, i):
        return self.numpy().reshape(-1)[i].item()

    def _set_element(self, i, value):
        arr = self._t.numpy().copy()
        arr.reshape(-1)[i] = value
        self._t.set(arr, self._t.place)

    _get_float_element = _get_double_element = _element
    _set_float_element = _set_double_element = _set_element

    def numpy(self):
        return as_uint16(self._t.numpy())     # bfloat16 reads back as uint16, as in Paddle

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr.astype(dtype) if dtype is not None else arr

    def __repr__(self):
        return f"paddle facade {self._t!r}"


DenseTensor = LoDTensor


class SelectedRows:
    """Paddle's SelectedRows around an opkit SelectedRows."""

    def __init__(self, rows=None, height: int = 0, _inner=None):
        self._s = _inner if _inner is not None else _tensor.SelectedRows(rows, height)

    def set_height(self, height):
        self._s.height = int(height)

    def height(self) -> int:
        return self._s.height

    def set_rows(self, rows):
        self._s.rows = [int(r) for r in rows]

    def rows(self) -> list:
        return list(self._s.rows)

    def get_tensor(self) -> LoDTensor:
        return LoDTensor(self._s.value)

    def sync_index(self):
        pass


class LoDTensorArray(list):
    pass


class Variable:
    """Paddle's scope Variable around an opkit Variable."""

    def __init__(self, inner: _scope.Variable):
        self._v = inner

    def get_tensor(self) -> LoDTensor:
        return LoDTensor(self._v.get_tensor())

    def get_selected_rows(self) -> SelectedRows:
        return SelectedRows(_inner=self._v.get_selected_rows())

    def get_lod_tensor_array(self):
        return self._v.get_lod_tensor_array()

    def is_initialized(self) -> bool:
        return self._v.is_initialized()

    def set_int(self, value):
        self._v.set_value(int(value))

    def get_int(self):
        return int(self._v.value())

    def set_float(self, value):
        self._v.set_value(float(value))

    def get_float(self):
        return float(self._v.value())


class Scope:
    """Paddle's core.Scope on opkit's Scope (`op.Operator.run(scope, place)` runs on it)."""

    def __init__(self, _inner: _scope.Scope | None = None):
        self._scope = _inner if _inner is not None else _scope.Scope()

    def var(self, name: str) -> Variable:
        return Variable(self._scope.var(name))

    def find_var(self, name: str):
        found = self._scope.find_var(name)
        return Variable(found) if found is not None else None

    def new_scope(self) -> "Scope":
        return Scope(self._scope.new_scope())

    def drop_kids(self):
        self._scope.drop_kids()

    def local_var_names(self):
        return self._scope.local_var_names()

    def erase(self, names):
        for name in [names] if isinstance(names, str) else names:
            self._scope.erase(name)
