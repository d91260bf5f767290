"""Paddle's VarType numbers for dtype attrs (framework.proto), accepted beside numpy names.

Not an op module (no ``_op.py`` suffix). ``dtype_attr_converter`` is an attr converter
(``AttrProto.set_converter``): it maps an int such as 5 (FP32) to ``"float32"`` and passes
names through, so ``dtype=5`` and ``dtype="float32"`` mean the same.
"""
from __future__ import annotations

import numbers

__all__ = ["VAR_TYPE_DTYPES", "dtype_attr_converter"]

VAR_TYPE_DTYPES = {0: "bool", 1: "int16", 2: "int32", 3: "int64", 4: "float16", 5: "float32",
                   6: "float64", 20: "uint8", 21: "int8", 22: "bfloat16", 23: "complex64",
                   24: "complex128"}


def dtype_attr_converter(value, allow_minus_one: bool = False):
    """A dtype attr value as a numpy dtype name (``""`` for -1 when allowed)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        v = int(value)
        if v == -1 and allow_minus_one:
            return ""
        if v not in VAR_TYPE_DTYPES:
            raise ValueError(f"{v} is not a Paddle VarType dtype number (known: "
                             f"{', '.join(f'{k}={n}' for k, n in VAR_TYPE_DTYPES.items())})")
        return VAR_TYPE_DTYPES[v]
    if hasattr(value, "dtype") and not isinstance(value, str):   # a numpy dtype or type
        import numpy as np

        return np.dtype(value).name
    if isinstance(value, str) and value and value not in VAR_TYPE_DTYPES.values():
        import numpy as np

        try:                          # an unknown name is refused when the op is built
            np.dtype(value)
        except TypeError:
            raise ValueError(f"{value!r} is not a dtype name (known: numpy's names, e.g. "
                             f"{', '.join(sorted(set(VAR_TYPE_DTYPES.values())))})") from None
    return value
