"""`layout`: non-contiguous float inputs (strided views, Fortran order) give the contiguous
run's outputs and gradients.

Bug class: kernels that assume C-contiguous memory (`.ravel()` order mixed with `.reshape`,
`np.frombuffer`, raw strides, `out.flat` writes) or that return views whose layout leaks.
The comparison is against the contiguous run of the same kernel, with the one tolerance
table (harness.tolerances, keyed by the run dtype).
"""
from __future__ import annotations

from harness.checks.base import Check, KernelRaised, Mismatch
from harness.pipeline import compare_runs, run_case
from harness.variants.layout import apply_layout


class LayoutCheck(Check):
    name = "layout"
    description = "non-contiguous float inputs give the contiguous run's outputs and gradients"
    order = 110
    variants = ("layout",)
    needs_float = True

    def verdict(self, derived, context):
        results = []
        runnable, _ = self.plan(derived, context, results)
        kind = derived.info["layout"]
        for combo in runnable:
            try:
                base = run_case(derived.case, combo, context)
            except Exception:  # noqa: BLE001 - the plain run failing is `output`'s business
                results.append(self.skipped(derived.base, "the contiguous run raises: "
                                            "see the output check", combo))
                continue
            try:
                got = run_case(derived.case, combo, context,
                               transform=lambda name, a: apply_layout(kind, a))
            except Exception as exc:  # noqa: BLE001
                from harness.checks._support import describe_error

                results.append(self.failed(derived, combo, f"the op raised "
                                           f"{describe_error(exc)}",
                                           kind=KernelRaised))
                continue
            problem = compare_runs(base, got, combo.dtype, "contiguous run")
            if problem:
                results.append(self.failed(derived, combo, problem, kind=Mismatch))
            else:
                results.append(self.passed(derived, combo))
        return results


CHECK = LayoutCheck()
