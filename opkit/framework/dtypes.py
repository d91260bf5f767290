"""The float dtypes opkit knows, low precision included.

float16 is numpy's own. bfloat16 comes from `ml_dtypes` (Google's, the one JAX and
TensorFlow use): a real numpy dtype (`np.dtype("bfloat16")` once it is imported), with
round-to-nearest-even casts from float32 / float64 and `ml_dtypes.finfo`. numpy reports its
kind as 'V' (not 'f'), so code that asks "is this a float array?" must use `is_float` here.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = ["bfloat16", "LOW_PRECISION", "FLOAT_DTYPES", "is_float", "is_low_precision",
           "finfo", "eps", "max_finite", "to_float64", "low_precision_of"]

bfloat16 = np.dtype(ml_dtypes.bfloat16)
LOW_PRECISION = ("float16", "bfloat16")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


def _name(dtype) -> str:
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype)


def is_float(dtype) -> bool:
    """float16 / bfloat16 / float32 / float64 (and any other numpy float)."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        return False
    return d.kind == "f" or d == bfloat16


def is_low_precision(dtype) -> bool:
    return _name(dtype) in LOW_PRECISION


def finfo(dtype):
    """numpy's finfo, or ml_dtypes' for bfloat16."""
    return ml_dtypes.finfo(np.dtype(dtype)) if np.dtype(dtype) == bfloat16 else \
        np.finfo(np.dtype(dtype))


def eps(dtype) -> float:
    return float(finfo(dtype).eps)


def max_finite(dtype) -> float:
    """65504 for float16, about 3.39e38 for bfloat16."""
    return float(finfo(dtype).max)


def to_float64(a):
    """A host array as float64 (a bfloat16 array too)."""
    return np.asarray(a).astype(np.float64)


def low_precision_of(slots) -> str | None:
    """'float16' / 'bfloat16' when every float array of `slots` ({slot: array, [arrays],
    [(name, array)], VarSpecs...}) is in that one low-precision dtype, else None."""
    found = set()

    def visit(v):
        if isinstance(v, np.ndarray):
            if is_float(v.dtype):
                found.add(v.dtype)      # (its name once at the end: a slow property)
        elif isinstance(v, (list, tuple)):
            for item in v:
                visit(item)
        elif hasattr(v, "data") and isinstance(v.data, np.ndarray):
            visit(v.data)

    for value in (slots or {}).values():
        visit(value)
    names = {d.name for d in found}
    return names.pop() if len(names) == 1 and next(iter(names)) in LOW_PRECISION else None
