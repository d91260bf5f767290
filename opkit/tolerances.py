"""Default tolerances of check_output, check_grad and `places` (the harness) and of `opkit
compat --programs` (checkers): one table for both, here in the layer below them
(`harness.judging.tolerances` re-exports it). The tables of
docs/gradients.md ("check_output tolerances"), docs/low_precision.md (float16 / bfloat16
gradients) and docs/harness.md (`places`). A caller's `atol` / `rtol` always wins over the
output defaults (for every dtype); `places` tolerances can only be loosened.
"""
from __future__ import annotations

import numpy as np

__all__ = ["output_tolerance", "grad_tolerance", "GRAD_ABS_FLOOR", "VACUOUS_ABS",
           "FLOAT32_GRAD_MIN", "LOW_PRECISION_GRAD_MIN", "LOW_PRECISION_GRAD_FLOOR",
           "grad_floor", "tolerance_note", "places_tolerance"]

GRAD_ABS_FLOOR = 1e-3      # denominator floor of the relative gradient error (Paddle's)
VACUOUS_ABS = 1e-10        # max |numeric gradient| at or under which a grad check is vacuous
FLOAT32_GRAD_MIN = 1e-2    # float32 analytic gradients: at least this max relative error
LOW_PRECISION_GRAD_MIN = {"float16": 2e-2, "bfloat16": 6e-2}   # ... float16 / bfloat16 ones
# the denominator floor of the relative gradient error of float16 / bfloat16 gradients: a
# grad kernel fed its forward output rounded to the storage dtype (sigmoid's Out, 1 - Out
# near 1) is off by about eps * |cotangent| in absolute terms
LOW_PRECISION_GRAD_FLOOR = {"float16": 1e-2, "bfloat16": 1e-1}

_SAME = {"float64": (1e-7, 1e-7), "float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5),
         "bfloat16": (1.6e-2, 1e-5)}
_DOWNCAST = {"float32": (1e-5, 1e-5)}


def output_tolerance(run_dtype, expected_dtype=None, atol=None, rtol=None) -> tuple[float, float]:
    """(atol, rtol) for an output of `run_dtype` compared with an expectation originally in
    `expected_dtype`; the caller's atol / rtol replace the defaults one by one."""
    run = np.dtype(run_dtype).name
    exp = np.dtype(expected_dtype).name if expected_dtype is not None else run
    default = _SAME.get(run, (0.0, 0.0))
    if np.dtype(exp).kind == "f" and np.dtype(exp).itemsize > np.dtype(run).itemsize:
        default = _DOWNCAST.get(run, default)
    elif np.dtype(exp).kind == "f" and np.dtype(exp).itemsize < np.dtype(run).itemsize:
        default = _SAME.get(exp, default)   # the less precise side decides
    d_rtol, d_atol = default
    return (float(d_atol if atol is None else atol), float(d_rtol if rtol is None else rtol))


# CPU vs GPU of the same kernel: reductions run in another order on the device
_PLACES = {"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-12)}


def places_tolerance(dtype, atol=None, rtol=None) -> tuple[float, float]:
    """(atol, rtol) for the `places` check (CPU vs GPU outputs of one kernel); a case's
    places_atol / places_rtol can only loosen it."""
    d_rtol, d_atol = _PLACES.get(np.dtype(dtype).name if dtype else "float64", _PLACES["float64"])
    return max(d_atol, float(atol or 0)), max(d_rtol, float(rtol or 0))


def tolerance_note(run_dtype, expected_dtype) -> str:
    """'' or why the tolerance is not the run dtype's own (for failure messages)."""
    if expected_dtype is None:
        return ""
    run, exp = np.dtype(run_dtype), np.dtype(expected_dtype)
    if exp.kind == "f" and run.kind == "f" and exp.itemsize < run.itemsize:
        return (f"; the expectation is {exp.name}, less precise than the {run.name} run, so "
                f"{exp.name}'s tolerance applies")
    return ""


def grad_tolerance(dtype, max_relative_error: float) -> float:
    """The max relative error allowed for analytic gradients computed in `dtype`."""
    name = np.dtype(dtype).name
    if name == "float64":
        return float(max_relative_error)
    return float(max(max_relative_error, LOW_PRECISION_GRAD_MIN.get(name, FLOAT32_GRAD_MIN)))


def grad_floor(dtype) -> float:
    """The denominator floor of the relative gradient error for gradients in `dtype`."""
    return LOW_PRECISION_GRAD_FLOOR.get(np.dtype(dtype).name, GRAD_ABS_FLOOR)
