"""One way to print a value in a message: plain Python, never numpy-2's `np.float64(1.5)`."""
from __future__ import annotations

import numpy as np

__all__ = ["plain", "fmt_value"]


def plain(value):
    """The value with numpy scalars and arrays (also inside lists, tuples, dicts) made plain
    Python numbers and lists."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


def fmt_value(value) -> str:
    """`repr` of the plain value: `1.2000000476837158`, `[1, 2]`, `'mean'`."""
    return repr(plain(value))
