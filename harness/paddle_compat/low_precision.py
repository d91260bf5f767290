"""Paddle's bfloat16 convention in OpTests: bfloat16 data carried as uint16 (the upper 16
bits of float32, `convert_float_to_uint16`), turned into real bfloat16 arrays
(`ml_dtypes.bfloat16`, a bit-for-bit view) for opkit's bfloat16 kernels, and back."""
from __future__ import annotations

import numpy as np

from opkit.framework.dtypes import bfloat16

__all__ = ["as_bfloat16", "as_uint16", "as_bfloat16_slots"]


def as_bfloat16(value):
    """A uint16 array as the bfloat16 array of the same bits; anything else unchanged."""
    if isinstance(value, np.ndarray) and value.dtype == np.uint16:
        return np.ascontiguousarray(value).view(bfloat16)
    return value


def as_uint16(value):
    """A bfloat16 array as Paddle's uint16 carrier (the same bits)."""
    if isinstance(value, np.ndarray) and value.dtype == bfloat16:
        return np.ascontiguousarray(value).view(np.uint16)
    return value


def _item(value):
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return (value[0], _item(value[1]))      # (name, data) of a duplicable slot
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], np.ndarray):
        return (as_bfloat16(value[0]), value[1])    # (array, LoD)
    if isinstance(value, list):
        return [_item(v) for v in value]
    return as_bfloat16(value)


def as_bfloat16_slots(slots: dict) -> dict:
    """Paddle's OpTest inputs / outputs with every uint16 array as bfloat16."""
    return {k: _item(v) for k, v in slots.items()}
