"""`places`: CPU and GPU give the same outputs and gradients (within a tolerance: GPU
reductions may add in another order). Skipped, with the reason, where no GPU is usable."""
from __future__ import annotations

import numpy as np

from harness.backend.dispatch import kernel_places
from harness.checks.base import Check
from harness.judging.compare import compare
from harness.backend.context import Combo, fail, gpu_unavailable_reason, prepare, run_forward_backward
from harness.options import place_option
from harness.judging.tolerances import places_tolerance

NAME = "places"


class _NoCPUKernel(Exception):
    """The GPU combo's dtype has no CPU kernel: nothing to compare with (a skip)."""


class PlacesCheck(Check):
    name = NAME
    description = "CPU and GPU agree"
    order = 100

    def verdict(self, derived, context):
        case = derived.case
        kernels = kernel_places(case.op_type)      # the run's backend's kernels

        def skip(msg):
            return [self.skipped(case, msg, Combo("GPU", ""))]

        if "GPU" not in context.selected_places() or "CPU" not in context.selected_places():
            return skip(f"needs both CPU and GPU selected ({place_option()})")
        if "GPU" not in kernels:
            return skip(f"op '{case.op_type}' has no GPU kernel")
        reason = gpu_unavailable_reason()
        if reason:
            return skip(f"GPU not usable: {reason}")

        def cpu(combo):               # the reference: the same dtype on the CPU
            if combo.dtype and combo.dtype not in kernels.get("CPU", []):
                raise _NoCPUKernel(f"no CPU {combo.dtype} kernel to compare with")
            return run_forward_backward(prepare(case, Combo("CPU", combo.dtype)), case,
                                        seed=context.seed)

        def gpu(combo):
            return run_forward_backward(prepare(case, combo), case, seed=context.seed)

        def compare_places(want, got, combo):
            atol, rtol = places_tolerance(combo.dtype, case.options.get("places_atol"),
                                          case.options.get("places_rtol"))
            worst, problem = _difference(want, got, atol, rtol)
            if problem:
                return [fail(NAME, combo, case, problem, worst)]
            return [self.passed(derived, combo, "CPU and GPU agree", worst)]

        return self.compare_each(
            derived, context, combos=lambda runnable: [c for c in runnable if c.place == "GPU"],
            base=cpu, variant=gpu, compare=compare_places,
            base_fails=lambda exc: "skip" if isinstance(exc, _NoCPUKernel) else "fail",
            base_skip=str, raised_prefix="the op raised before the check could finish: ")


def _difference(cpu: dict, gpu: dict, atol, rtol):
    """(worst error, the first problem or None) of the GPU runs against the CPU ones."""
    worst, problem = 0.0, None
    for name, a in cpu.items():
        b = gpu.get(name)
        if a is None or b is None:
            if (a is None) != (b is None):
                problem = problem or f"{name}: produced on one place only"
            continue
        if a.shape != b.shape:
            problem = problem or f"{name}: CPU shape {a.shape}, GPU shape {b.shape}"
            continue
        if a.dtype.kind not in "fc":
            if not np.array_equal(a, b):
                problem = problem or f"{name}: CPU and GPU differ"
            continue
        msg, w = compare(name, b, a, b.dtype.name, atol, rtol, True)
        worst = max(worst, w or 0.0)
        if msg and problem is None:
            problem = msg.replace("actual", "GPU").replace("expected", "CPU")
    return worst, problem


CHECK = PlacesCheck()
