"""OpKernelType (the key a kernel is chosen by) and the OpKernel base class."""
from __future__ import annotations

import numpy as np

import opkit.framework.dtypes  # noqa: F401  (registers bfloat16 with numpy: np.dtype("bfloat16"))

from opkit.framework.place import Place, place_kind, to_place

__all__ = ["OpKernelType", "OpKernel", "dtype_name"]


_NAMES: dict = {}


def dtype_name(dtype) -> str:
    """'float32' for np.float32, 'float32', np.dtype('float32'), a cupy dtype..."""
    try:
        return _NAMES[dtype]
    except (KeyError, TypeError):
        pass
    name = np.dtype(dtype).name
    try:
        _NAMES[dtype] = name
    except TypeError:
        pass
    return name


class OpKernelType:
    """Which kernel to run: dtype, place, layout and library."""

    __slots__ = ("dtype", "place", "layout", "library")

    def __init__(self, dtype, place, layout: str = "ANY", library: str = "PLAIN"):
        self.dtype = dtype_name(dtype)
        self.place: Place = to_place(place)
        self.layout = layout
        self.library = library

    def key(self) -> tuple:
        return (self.dtype, self.place.kind, self.layout, self.library)

    def __eq__(self, other):
        return isinstance(other, OpKernelType) and self.key() == other.key() and \
            self.place == other.place

    def __hash__(self):
        return hash((self.key(), self.place))

    def __repr__(self):
        return (f"OpKernelType(dtype={self.dtype}, place={self.place!r}, layout={self.layout}, "
                f"library={self.library})")


class OpKernel:
    """Base class of class-style kernels: override `compute(self, ctx)`."""

    def compute(self, ctx) -> None:  # pragma: no cover - overridden
        raise NotImplementedError(f"{type(self).__name__}.compute(ctx) is not implemented")


def kernel_key(dtype, place, layout="ANY", library="PLAIN") -> tuple:
    return (dtype_name(dtype), place_kind(place), layout, library)
