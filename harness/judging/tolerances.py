"""Default tolerances of check_output, check_grad and `places`: the tables of
docs/gradients.md ("check_output tolerances"), docs/low_precision.md (float16 / bfloat16
gradients) and docs/harness.md (`places`). They live in `opkit.tolerances`, the layer below
the harness and the checkers, since `opkit compat --programs` judges replayed results with
the same table; this module is the harness's name for them.
"""
from __future__ import annotations

from opkit.tolerances import (FLOAT32_GRAD_MIN, GRAD_ABS_FLOOR, LOW_PRECISION_GRAD_FLOOR,
                              LOW_PRECISION_GRAD_MIN, VACUOUS_ABS, grad_floor, grad_tolerance,
                              output_tolerance, places_tolerance, tolerance_note)

__all__ = ["output_tolerance", "grad_tolerance", "GRAD_ABS_FLOOR", "VACUOUS_ABS",
           "FLOAT32_GRAD_MIN", "LOW_PRECISION_GRAD_MIN", "LOW_PRECISION_GRAD_FLOOR",
           "grad_floor", "tolerance_note", "places_tolerance"]
