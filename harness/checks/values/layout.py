"""`layout`: non-contiguous float inputs (strided views, Fortran order) give the contiguous
run's outputs and gradients. Bug class and verdict: docs/harness.md, "Input variants"."""
from __future__ import annotations

from harness.checks.base import Check
from harness.judging.compare import compare_runs
from harness.backend.seam import run as run_case
from harness.inputs.variants.layout import apply_layout


class LayoutCheck(Check):
    name = "layout"
    description = "non-contiguous float inputs give the contiguous run's outputs and gradients"
    order = 110
    needs = ("strided_inputs",)
    variants = ("layout",)
    needs_float = True

    def verdict(self, derived, context):
        kind = derived.info["layout"]
        return self.compare_each(
            derived, context,
            base=lambda combo: run_case(derived.case, combo, context),
            variant=lambda combo: run_case(derived.case, combo, context,
                                           transform=lambda name, a: apply_layout(kind, a)),
            compare=lambda want, got, combo: compare_runs(want, got, combo.dtype,
                                                          "contiguous run"),
            base_skip="the contiguous run raises: see the output check")


CHECK = LayoutCheck()
