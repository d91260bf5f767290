"""float16 / bfloat16 kernels that compute in float32 (Paddle's `MPTypeTrait`: the storage
dtype is half or bfloat16, the math is float32, the result is rounded once, to nearest even).

    from opkit.framework.low_precision import register_low_precision

    register_low_precision("softmax")          # float16 + bfloat16 twins of its float32 kernels

`compute_in_float32(kernel)` wraps one kernel function `f(ctx)`: the inputs it reads through
`ctx.input` / `ctx.inputs` in the storage dtype come to it as float32, `ctx.dtype` is float32,
and every float32 array it stores as an output (`set_output`, `set_outputs`, or a buffer of
`mutable_data`) is rounded to the storage dtype afterwards. `register_low_precision(op_type)`
registers that wrapper of the op's float32 kernel, on every place it has one, for float16 and
bfloat16 (or the `dtypes` given); on the GPU float16 only (cupy has no bfloat16 dtype).
"""
from __future__ import annotations

import functools

import numpy as np

from opkit.framework import errors
from opkit.framework.dtypes import LOW_PRECISION
from opkit.framework.tensor import LoDTensor, SelectedRows

__all__ = ["compute_in_float32", "register_low_precision"]

_F32 = np.dtype(np.float32)
GPU_LACKS = ("bfloat16",)   # dtypes cupy arrays cannot hold


class _Float32Context:
    """The kernel's ExecutionContext as the float32 kernel sees it."""

    def __init__(self, ctx, storage):
        self._ctx = ctx
        self._storage = storage

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    @property
    def dtype(self):
        return _F32

    def _up(self, a):
        if a is not None and hasattr(a, "astype") and getattr(a, "dtype", None) == self._storage:
            return a.astype(_F32)
        return a

    def input(self, name):
        return self._up(self._ctx.input(name))

    def inputs(self, name):
        return [self._up(a) for a in self._ctx.inputs(name)]

    def _down(self, var_name, a):
        if getattr(a, "dtype", None) == _F32 and hasattr(a, "astype") and \
                self._ctx.declared_output_dtype(var_name) is None:
            with np.errstate(over="ignore"):    # past the storage range: inf, as a cast
                return a.astype(self._storage)
        return a

    def set_output(self, name, array, lod=None):
        names = self._ctx.output_names(name)
        self._ctx.set_output(name, self._down(names[0] if names else name, array), lod)

    def set_outputs(self, slot, arrays, lods=None):
        names = list(self._ctx.output_names(slot))
        names += [slot] * (len(arrays) - len(names))
        self._ctx.set_outputs(slot, [None if a is None else self._down(n, a)
                                     for n, a in zip(names, arrays)], lods)


def compute_in_float32(kernel):
    """`kernel` (a float32 kernel function) as a low-precision kernel: float32 inside, the
    outputs rounded to the kernel's storage dtype."""

    @functools.wraps(kernel)
    def low_precision_kernel(ctx):
        storage = np.dtype(ctx.dtype)
        kernel(_Float32Context(ctx, storage))
        scope = ctx.scope
        for name, var in list(ctx.written.items()):
            if ctx.declared_output_dtype(name) is not None:
                continue        # a dtype infer_shape fixes (accuracy's float32 Accuracy)
            var = var if var is not None else scope.find_var(name)
            tensor = var.value() if var is not None else None
            if isinstance(tensor, SelectedRows):
                tensor = tensor.value
            if not isinstance(tensor, LoDTensor) or not tensor.is_initialized():
                continue
            data = tensor.data
            if getattr(data, "dtype", None) == _F32:
                with np.errstate(over="ignore"):    # past the storage range: inf, as a cast
                    tensor.set(data.astype(storage), tensor.place)
    low_precision_kernel.computes_in = "float32"
    return low_precision_kernel


def register_low_precision(op_type: str, dtypes=LOW_PRECISION, place=None) -> None:
    """float16 / bfloat16 kernels of `op_type` that run its float32 kernel in float32 (on the
    places where it has one, or `place`)."""
    from opkit.framework.registry import kernels_of, register_kernel

    by_place = {}
    for entry in kernels_of(op_type).values():
        if entry.dtype == "float32" and (entry.layout, entry.library) == ("ANY", "PLAIN"):
            by_place.setdefault(entry.fn, []).append(entry.place)
    if not by_place:
        raise errors.NotFound("register_low_precision('%s'): the op has no float32 kernel "
                              "to compute in", op_type)
    for fn, places in by_place.items():
        wanted = [p for p in places if place is None or p in _as_tuple(place)]
        for p in wanted:
            # cupy has no bfloat16 dtype: on the GPU, float16 only
            dts = tuple(d for d in _as_tuple(dtypes) if p != "GPU" or d not in GPU_LACKS)
            if dts:
                register_kernel(op_type, place=p, dtypes=dts)(compute_in_float32(fn))


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)
