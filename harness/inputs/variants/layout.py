"""`layout`: every float input fed as a non-contiguous view of the same values, "strided"
or "fortran" (docs/harness.md, "Input variants"). `apply_layout` makes the view AFTER the
inputs are cast to the run dtype (a cast or copy would make them contiguous again)."""
from __future__ import annotations

import numpy as np

from opkit.framework.dtypes import is_float

from harness.backend.case import Derived, Unsupported, normalize_slots

__all__ = ["derive", "apply_layout", "LAYOUTS"]


def strided(a: np.ndarray) -> np.ndarray:
    if a.ndim == 0 or a.size == 0:
        return a
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    big[..., ::2] = a
    view = big[..., ::2]
    assert np.shares_memory(view, big) and not view.flags.c_contiguous or a.shape[-1] <= 1
    return view


def fortran(a: np.ndarray) -> np.ndarray:
    if a.ndim < 2:
        return a
    return np.asfortranarray(a)


LAYOUTS = {"strided": strided, "fortran": fortran}


def apply_layout(kind: str, a):
    if isinstance(a, np.ndarray) and is_float(a.dtype):
        return LAYOUTS[kind](a)
    return a


def derive(case, context=None):
    floats = [s for specs in normalize_slots(case.inputs).values() for s in specs
              if isinstance(s.data, np.ndarray) and is_float(s.data.dtype) and s.data.size]
    if not floats:
        return Unsupported("layout", "the case has no non-empty float input")
    out = []
    if any(s.data.ndim >= 1 and s.data.shape[-1] > 1 for s in floats):
        out.append(Derived("layout", case, case, "float inputs fed as strided views",
                           {"layout": "strided"}))
    if any(s.data.ndim >= 2 and min(s.data.shape) > 1 for s in floats):
        out.append(Derived("layout", case, case, "float inputs fed in Fortran order",
                           {"layout": "fortran"}))
    if not out:
        return Unsupported("layout", "every float input has at most one element per row: "
                                     "no non-contiguous view is possible")
    return out
