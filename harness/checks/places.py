"""`places`: CPU and GPU give the same outputs and gradients (within a tolerance: GPU
reductions may add in another order). Skipped, with the reason, where no GPU is usable."""
from __future__ import annotations

import numpy as np

from harness.checks._support import (CheckContext, Combo, fail, gpu_unavailable_reason, prepare,
                                     run_forward_backward)
from harness import settings
from harness.checks.base import Check, Mismatch
from harness.report import SKIP, CheckResult

NAME = "places"


def check(case, context: CheckContext) -> list:
    from opkit.registry import op_info

    kernels = op_info(case.op_type).kernel_places()

    def skip(msg, dtype=""):
        return CheckResult(NAME, SKIP, "GPU", dtype, case.name, msg)

    if "GPU" not in context.selected_places() or "CPU" not in context.selected_places():
        return [skip(f"needs both CPU and GPU selected ({settings.place_option()})")]
    if "GPU" not in kernels:
        return [skip(f"op '{case.op_type}' has no GPU kernel")]
    reason = gpu_unavailable_reason()
    if reason:
        return [skip(f"GPU not usable: {reason}")]
    from harness.checks._support import combos

    runnable, results = combos(case, context, NAME)
    for combo in [c for c in runnable if c.place == "GPU"]:
        if combo.dtype and combo.dtype not in kernels.get("CPU", []):
            results.append(skip(f"no CPU {combo.dtype} kernel to compare with", combo.dtype))
            continue
        from harness.tolerances import places_tolerance

        atol, rtol = places_tolerance(combo.dtype, case.options.get("places_atol"),
                                      case.options.get("places_rtol"))
        try:
            cpu = run_forward_backward(prepare(case, Combo("CPU", combo.dtype)), case,
                                       seed=context.seed)
            gpu = run_forward_backward(prepare(case, combo), case, seed=context.seed)
        except Exception as exc:
            results.append(fail(NAME, combo, case, "the op raised before the check could "
                                f"finish: {str(exc).splitlines()[0]}", kind="kernel-raised"))
            continue
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
            from harness.compare import compare

            msg, w = compare(name, b, a, b.dtype.name, atol, rtol, True)
            worst = max(worst, w or 0.0)
            if msg and problem is None:
                problem = msg.replace("actual", "GPU").replace("expected", "CPU")
        if problem:
            results.append(fail(NAME, combo, case, problem, worst))
        else:
            results.append(CheckResult(NAME, "pass", "GPU", combo.dtype, case.name,
                                       "CPU and GPU agree", worst))
    return results


class PlacesCheck(Check):
    name = NAME
    description = "CPU and GPU agree"
    order = 100

    def verdict(self, derived, context):
        return self.adopt(derived, check(derived.case, context), Mismatch)


CHECK = PlacesCheck()
