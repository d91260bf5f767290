"""The ONE output comparator of the harness (every check that compares arrays calls it):
`compare(name, got, want, run_dtype, atol, rtol, equal_nan)` -> (message or None, worst abs
error or None), with the tolerances of harness.judging.tolerances.output_tolerance (the less precise
of the run dtype and the expectation's decides). The message names the worst element:
index, actual, expected, errors and the tolerance used.
"""
from __future__ import annotations

import numpy as np

from harness.judging.tolerances import output_tolerance, tolerance_note
from opkit.framework.dtypes import is_float
from harness.reporting.values import fmt_value

__all__ = ["compare", "fmt_index", "first_wrong", "first_flagged", "outside"]


def fmt_index(name: str, idx) -> str:
    idx = tuple(int(i) for i in idx)
    return f"{name}[{', '.join(str(i) for i in idx)}]" if idx else name


def first_flagged(bad) -> tuple[int, tuple]:
    """(flat position, index) of the first True element of the mask `bad`."""
    k = int(np.flatnonzero(np.reshape(bad, -1))[0])
    return k, (np.unravel_index(k, np.shape(bad)) if np.ndim(bad) else ())


def _outside(g, w, atol: float, rtol: float, equal_nan: bool = True):
    """(|g - w|, atol + rtol * |w|, where g is outside it: not the same inf, nor both NaN
    with `equal_nan`), float64 arrays. An infinite `w` is met by the same inf only (its
    bound is infinite: without this, 5 would be within rtol * |inf| of inf)."""
    with np.errstate(invalid="ignore", over="ignore"):
        abs_err = np.abs(g - w)
        bound = atol + rtol * np.abs(w)
        bad = (~(abs_err <= bound) & ~(np.isinf(g) & (g == w))) | (np.isinf(w) & (g != w))
        if equal_nan:
            bad &= ~(np.isnan(g) & np.isnan(w))
    return abs_err, bound, bad


def outside(got, want, atol: float, rtol: float, equal_nan: bool = True):
    """THE closeness rule of output elements: the mask of the elements of `got` outside
    atol + rtol * |want| (the same inf agrees; NaN against NaN agrees with `equal_nan`)."""
    return _outside(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                    atol, rtol, equal_nan)[2]


def first_wrong(got, want, atol: float, rtol: float):
    """(index, actual, expected) of the first element outside atol + rtol*|want|, or None."""
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    bad = _outside(g, w, atol, rtol)[2]
    if not bad.any():
        return None
    k, idx = first_flagged(bad)
    return tuple(int(i) for i in idx), g.reshape(-1)[k].item(), w.reshape(-1)[k].item()


def compare(name, got, want, run_dtype, atol, rtol, equal_nan, fixed_dtype=None):
    """None when they agree, else (message, worst error). `fixed_dtype`: the output's dtype
    is fixed by the op's definition (accuracy's float32 Accuracy), so a run in another
    float dtype may give it."""
    if got is None:
        return f"output '{name}' was not produced", None
    got = np.asarray(got)
    want_orig = np.asarray(want)
    if got.shape != want_orig.shape:
        return (f"output '{name}': shape {tuple(got.shape)}, expected {tuple(want_orig.shape)}",
                None)
    if is_float(want_orig.dtype):
        allowed = {np.dtype(run_dtype).name if run_dtype else want_orig.dtype.name,
                   want_orig.dtype.name}
        if fixed_dtype is not None:
            allowed.add(np.dtype(fixed_dtype).name)
        if got.dtype.name not in allowed:
            return (f"output '{name}': dtype {got.dtype.name}, expected "
                    f"{' or '.join(sorted(allowed))}", None)
        a_tol, r_tol = output_tolerance(got.dtype, want_orig.dtype, atol, rtol)
        g64, w64 = got.astype(np.float64), want_orig.astype(got.dtype).astype(np.float64)
        abs_err, bound, bad = _outside(g64, w64, a_tol, r_tol, equal_nan)
        finite = abs_err[np.isfinite(abs_err)]
        worst = float(finite.max()) if finite.size else 0.0
        if not bad.any():
            return None, worst
        with np.errstate(invalid="ignore", divide="ignore"):
            excess = np.where(bad, abs_err / np.maximum(bound, 1e-300), -1.0)
        excess = np.where(np.isnan(excess), np.inf, excess)
        k = int(np.argmax(excess))
        idx = np.unravel_index(k, got.shape) if got.ndim else ()
        a, e = float(g64.reshape(-1)[k]), float(w64.reshape(-1)[k])
        ae = abs(a - e)
        re = ae / abs(e) if e != 0 else float("inf")
        k0, i0 = first_flagged(bad)
        first = (f"first at {fmt_index(name, i0)}: actual "
                 f"{fmt_value(float(g64.reshape(-1)[k0]))}, expected "
                 f"{fmt_value(float(w64.reshape(-1)[k0]))}; ") if k0 != k else ""
        msg = (f"output '{name}' (shape {tuple(got.shape)}, {got.dtype.name}): "
               f"{int(bad.sum())} of {bad.size} elements differ; {first}worst at "
               f"{fmt_index(name, idx)}: actual {fmt_value(a)}, expected {fmt_value(e)}, abs "
               f"error {ae:.6g}, rel error {re:.6g} (tolerance: atol {a_tol:g} + rtol {r_tol:g} "
               f"* |expected|{tolerance_note(got.dtype, want_orig.dtype)})")
        return msg, worst
    # integers, bools, ...: exact
    if got.dtype != want_orig.dtype:
        return (f"output '{name}': dtype {got.dtype.name}, expected {want_orig.dtype.name}",
                None)
    if np.array_equal(got, want_orig):
        return None, 0.0
    bad = got != want_orig
    k, idx = first_flagged(bad)
    return (f"output '{name}' (shape {tuple(got.shape)}, {got.dtype.name}): "
            f"{int(bad.sum())} of {bad.size} elements differ (compared exactly); first at "
            f"{fmt_index(name, idx)}: actual {fmt_value(got.reshape(-1)[k].item())}, expected "
            f"{fmt_value(want_orig.reshape(-1)[k].item())}", None)


def compare_runs(want: dict, got: dict, dtype: str, what: str) -> str | None:
    for name, w in want.items():
        g = got.get(name)
        if w is None and g is None:
            continue
        if w is None or g is None:
            return f"{name}: produced in one run only ({what}: {w is not None})"
        w, g = np.asarray(w), np.asarray(g)
        if w.dtype.kind not in "fc":
            if w.shape != g.shape or not np.array_equal(w, g):
                return f"{name}: differs from the {what} (compared exactly)"
            continue
        msg, _ = compare(name, g, w, dtype or w.dtype.name, None, None, True)
        if msg:
            return msg.replace("expected", f"{what} gave")
    return None


def same_value(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    return a == b


def shares_memory(a, b) -> bool:
    """True when arrays `a` and `b` (numpy or cupy) overlap in memory."""
    if a is None or b is None:
        return False
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if not np.may_share_memory(a, b):
            return False
        try:
            return bool(np.shares_memory(a, b, max_work=10 ** 6))
        except Exception:  # numpy's TooHardError: assume they overlap
            return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False  # host vs device
    if a.size == 0 or b.size == 0:
        return False  # an empty array holds no memory (cupy gives every one pointer 0)
    try:  # cupy: compare the byte ranges
        a0, b0 = a.data.ptr, b.data.ptr
        return a0 < b0 + max(b.nbytes, 1) and b0 < a0 + max(a.nbytes, 1) and \
            a.data.device_id == b.data.device_id
    except AttributeError:
        return False
