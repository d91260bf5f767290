"""LoDTensor (= Tensor), SelectedRows and LoDTensorArray."""
from __future__ import annotations

import numpy as np

from opkit.framework import errors
from opkit.framework.place import CPUPlace, Place, to_place

__all__ = ["LoDTensor", "Tensor", "SelectedRows", "LoDTensorArray", "lengths_to_offsets",
           "offsets_to_lengths", "validate_lod"]


_CPU = CPUPlace()


def lengths_to_offsets(lengths) -> list[list[int]]:
    """[[2, 0, 3]] -> [[0, 2, 2, 5]]"""
    out = []
    for level in lengths:
        offsets = [0]
        for n in level:
            offsets.append(offsets[-1] + int(n))
        out.append(offsets)
    return out


def offsets_to_lengths(lod) -> list[list[int]]:
    """[[0, 2, 2, 5]] -> [[2, 0, 3]]"""
    return [[int(b) - int(a) for a, b in zip(level[:-1], level[1:])] for level in lod]


def lod_problem(lod, rows: int | None) -> str | None:
    """What is wrong with an offset LoD for a tensor of `rows` rows, or None when it is valid."""
    if not isinstance(lod, (list, tuple)):
        return f"LoD must be a list of levels, got {type(lod).__name__}"
    for i, level in enumerate(lod):
        if not isinstance(level, (list, tuple)) or len(level) < 1:
            return f"LoD level {i} must be a non-empty list of offsets, got {level!r}"
        if any(int(x) != x for x in level):
            return f"LoD level {i} holds a non-integer offset: {level!r}"
        if level[0] != 0:
            return f"LoD level {i} must start at offset 0, got {level[0]} in {list(level)}"
        for j in range(1, len(level)):
            if level[j] < level[j - 1]:
                return (f"LoD level {i} offsets must be non-decreasing, but offset {j} "
                        f"({level[j]}) < offset {j - 1} ({level[j - 1]}) in {list(level)}")
        if i + 1 < len(lod):
            nxt = lod[i + 1]
            if isinstance(nxt, (list, tuple)) and level[-1] != len(nxt) - 1:
                return (f"LoD levels are inconsistent: level {i} ends at {level[-1]} but level "
                        f"{i + 1} has {len(nxt) - 1} sequences")
    if lod and rows is not None and lod[-1][-1] != rows:
        return (f"the last LoD offset ({lod[-1][-1]}) must equal the number of rows of the "
                f"tensor ({rows})")
    return None


def validate_lod(lod, rows: int | None, what: str = "LoDTensor") -> list[list[int]]:
    problem = lod_problem(lod, rows)
    if problem:
        raise errors.InvalidArgument("%s: %s", what, problem)
    return [[int(x) for x in level] for level in lod]


class LoDTensor:
    """A dense array with an optional offset-based LoD (level of detail).

    `data` is a numpy or cupy array. A tensor made by `meta_only` has a shape, dtype and LoD
    but no readable data: reading `.data` raises an error naming the reason (used for
    no_need_buffer variables).
    """

    __slots__ = ("_data", "_lod", "_place", "_meta", "_no_data_reason", "name", "_alloc", "_ro")

    def __init__(self, data=None, lod=None, place: Place | None = None):
        self._data = None
        self._meta = None
        self._no_data_reason = None
        self._alloc = None
        self._ro = None  # (data, its read-only view) as kernels see it, made once per array
        self.name = None
        self._place = to_place(place) if place is not None else None
        if data is not None:
            self.set(data, place)
        self._lod = []
        if lod:
            self.set_lod(lod)

    # -- data ---------------------------------------------------------------------------
    @property
    def data(self):
        if self._data is None and self._no_data_reason:
            raise errors.PreconditionNotMet("%s", self._no_data_reason)
        return self._data

    @property
    def buffer(self):
        """The stored array itself (no copy), or None: never raises. For checks that observe
        buffers (identity, sharing, writes); kernels use `ExecutionContext.input`."""
        return self._data

    def set(self, array, place: Place | None = None) -> None:
        if place is None and array.__class__ is np.ndarray:  # the common case, kept cheap
            self._data = array
            self._ro = None
            self._meta = None
            self._no_data_reason = None
            self._place = _CPU
            return
        from opkit.framework.device import is_device_array, to_device

        if place is not None:
            place = to_place(place)
            array = to_device(array, place)
        elif not is_device_array(array):
            array = np.asarray(array)
        self._data = array
        self._ro = None
        self._meta = None
        self._no_data_reason = None
        if place is None:
            place = self._infer_place(array)
        self._place = place

    @staticmethod
    def _infer_place(array) -> Place:
        from opkit.framework.device import is_device_array
        from opkit.framework.place import CUDAPlace

        if is_device_array(array):
            return CUDAPlace(int(array.device.id))
        return CPUPlace()

    def is_initialized(self) -> bool:
        return self._data is not None or self._meta is not None

    def mutable_data(self, shape=None, dtype=None):
        """A writable buffer of `shape` and `dtype` owned by this tensor (inside a kernel the
        shape defaults to the one infer_shape set, and a declared inplace input's buffer may
        be reused)."""
        if self._alloc is not None:
            return self._alloc(shape, dtype)
        if shape is None:
            raise errors.InvalidArgument("mutable_data() outside a kernel needs a shape")
        self.set(np.empty(tuple(shape), dtype=np.dtype(dtype or "float32")))
        return self._data

    @classmethod
    def meta_only(cls, shape, dtype, lod=None, place=None, reason: str = "") -> "LoDTensor":
        t = cls()
        t._meta = (tuple(int(d) for d in shape), np.dtype(dtype))
        t._lod = [list(level) for level in (lod or [])]
        t._place = to_place(place) if place is not None else CPUPlace()
        t._no_data_reason = reason or "this tensor holds no data (only its shape, dtype and LoD)"
        return t

    @property
    def shape(self) -> tuple:
        if self._data is not None:
            return tuple(self._data.shape)
        if self._meta is not None:
            return self._meta[0]
        raise errors.PreconditionNotMet("the tensor is not initialized: it has no shape yet")

    @property
    def dtype(self):
        if self._data is not None:
            return self._data.dtype
        if self._meta is not None:
            return self._meta[1]
        raise errors.PreconditionNotMet("the tensor is not initialized: it has no dtype yet")

    @property
    def place(self) -> Place | None:
        return self._place

    def numpy(self) -> np.ndarray:
        from opkit.framework.device import to_host

        return np.asarray(to_host(self.data))

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr.astype(dtype) if dtype is not None else arr

    # -- LoD ----------------------------------------------------------------------------
    @property
    def lod(self) -> list[list[int]]:
        return self._lod

    def set_lod(self, lod) -> None:
        rows = self.shape[0] if self.is_initialized() and len(self.shape) else None
        self._lod = validate_lod(lod or [], rows)

    def recursive_sequence_lengths(self) -> list[list[int]]:
        return offsets_to_lengths(self._lod)

    def set_recursive_sequence_lengths(self, lengths) -> None:
        for i, level in enumerate(lengths or []):
            if any(int(n) < 0 for n in level):
                raise errors.InvalidArgument(
                    "sequence lengths must be >= 0, got %s at level %d", list(level), i)
        self.set_lod(lengths_to_offsets(lengths or []))

    def has_valid_recursive_sequence_lengths(self) -> bool:
        rows = self.shape[0] if self.is_initialized() and len(self.shape) else None
        return lod_problem(self._lod, rows) is None

    def lod_level(self) -> int:
        return len(self._lod)

    def __repr__(self):
        if not self.is_initialized():
            return "LoDTensor(<not initialized>)"
        return f"LoDTensor(shape={self.shape}, dtype={self.dtype}, lod={self._lod}, place={self._place})"


Tensor = LoDTensor


class SelectedRows:
    """A sparse row slice of a `height` x ... tensor: value[i] is row rows[i]."""

    def __init__(self, rows=None, height: int = 0, value=None):
        self.rows = [int(r) for r in (rows or [])]
        self.height = int(height)
        if value is not None and not isinstance(value, LoDTensor):
            value = LoDTensor(value)
        self.value = value if value is not None else LoDTensor()
        for r in self.rows:
            if not 0 <= r < max(self.height, 1) and self.height:
                raise errors.OutOfRange("SelectedRows row %d is outside [0, %d)", r, self.height)

    def get_complete_dims(self) -> tuple:
        rest = self.value.shape[1:] if self.value.is_initialized() else ()
        return (self.height, *rest)

    def is_initialized(self) -> bool:
        return self.value.is_initialized()

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def place(self):
        return self.value.place

    def to_dense(self):
        """The complete dense array (duplicate rows added)."""
        from opkit.framework.device import array_module

        data = self.value.data
        xp = array_module(data)
        out = xp.zeros(self.get_complete_dims(), dtype=data.dtype)
        rows = xp.asarray(self.rows, dtype=np.int64)
        if xp is np:
            np.add.at(out, rows, data)
        else:
            xp.add.at(out, rows, data)
        return out

    def __repr__(self):
        return f"SelectedRows(rows={self.rows}, height={self.height}, value={self.value!r})"


class LoDTensorArray(list):
    """A list of LoDTensor (the value type of `array_write`/`array_read`)."""

    def is_initialized(self) -> bool:
        return True
