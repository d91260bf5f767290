"""What the runtime checks share: the check context, places x dtypes to run, fresh prepared
ops, forward+backward runs, kernel hooks, bitwise comparison and ULP distances."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harness.backend.dispatch import kernel_places as backend_kernel_places
from harness.backend.case import attr_float_dtype, case_inputs, has_float_inputs, normalize_slots
from harness.reporting.messages import describe_error, rel, user_line
from harness.backend.seam import (Combo, PreparedOp, gpu_unavailable_reason, grad_outputs, grad_wrt,
                        has_grad, op_refused, output_slots, place_object, prepare,
                        run_forward_backward)
from harness.options import DEFAULT_SEED, selected_dtypes, selected_places
from harness.reporting.report import FAIL, PASS, SKIP, CheckResult
from opkit.framework.dtypes import low_precision_of
from opkit.framework.hooks import KernelHooks as Hooks   # the checks' kernel hooks' base

# (prepare, run_forward_backward, op_refused, describe_error, ...: harness.backend.seam, the one
# engine; re-exported here for the checks)
__all__ = ["CheckContext", "Combo", "combos", "prepare", "run_forward_backward", "Hooks",
           "result", "first_difference", "describe_error", "user_line",
           "grad_op_types", "grad_wrt", "place_object", "gpu_unavailable_reason", "op_refused",
           "case_inputs", "output_slots", "has_grad", "grad_outputs", "rel", "refeed",
           "has_float_inputs"]


@dataclass
class CheckContext:
    """What a check gets beside the Case: the run's options."""

    seed: int = DEFAULT_SEED
    places: tuple | None = None        # None: harness.options.selected_places()
    dtypes: tuple | None = None        # None: harness.options.selected_dtypes()
    runs: int = 3                      # determinism: number of runs
    timeout: float | None = None       # seconds per check (enforced by harness.executing.pool)
    test: object = None                # the OpTest instance the case came from, if any
    fuzz: int = 0                      # --fuzz N
    cache: dict = field(default_factory=dict)  # per-case scratch shared by checks
    hash_seeds: str = "off"            # determinism across processes: "own" pair of fresh
                                       # processes per op (the pytest items), "batch" (the
                                       # run's one pair does it: opkit test), "off"
    op_level: tuple = ()               # checks that run once per op in their own task
                                       # (harness.executing.pool.plan): the case's run skips them
    generated: bool = False            # a fuzz-generated case (harness.executing.fuzz): checks may
                                       # leave out what the OpTest's own case already proved

    def selected_places(self) -> tuple:
        return tuple(self.places) if self.places is not None else selected_places()

    def selected_dtypes(self) -> tuple:
        return tuple(self.dtypes) if self.dtypes is not None else selected_dtypes()


def combos(case, ctx: CheckContext, check: str, op_type: str | None = None):
    """THE place x dtype planner of the harness: (runnable combos, skip results).

    Every selected place with a kernel x every float dtype (float32, float64) with a kernel
    there that is selected; dtype "" = inputs as given (no float inputs, or no float kernels).
    A case without float inputs whose `dtype` attr selects a float kernel (fill_constant,
    gaussian_random) runs in each float dtype too: prepare() sets the attr to the combo's.
    A GPU that is selected but unusable, a place whose kernels have none of the selected
    dtypes, and an op with no kernel on any selected place each give a skip with the reason."""
    kernel_places = backend_kernel_places(op_type or case.op_type)
    places = ctx.selected_places()
    dtypes = ctx.selected_dtypes()
    has_float = has_float_inputs(case) or attr_float_dtype(case) is not None
    low = low_precision_of(normalize_slots(case.inputs))   # float16 / bfloat16: the case's own
    runnable, skips = [], []

    def skip(place: str, dtype: str, reason: str) -> None:
        skips.append(CheckResult(check, SKIP, place, dtype, case.name, reason))

    for place in places:
        kernel_dtypes = kernel_places.get(place)
        if not kernel_dtypes:
            continue
        reason = gpu_unavailable_reason() if place == "GPU" else None
        if reason:
            skip("GPU", "", f"GPU not usable: {reason}")
        elif low:
            if low in kernel_dtypes:
                runnable.append(Combo(place, low))
            else:
                skip(place, low, f"no {place} {low} kernel")
        else:
            floats = [d for d in ("float32", "float64") if d in kernel_dtypes]
            picked = [d for d in floats if d in dtypes] if has_float and floats else [""]
            if not picked:
                skip(place, "", f"no {place} kernel for the selected dtypes ({', '.join(dtypes)})")
            runnable.extend(Combo(place, d) for d in picked)
    if not runnable and not skips:
        skip("", "", f"op '{case.op_type}' has no kernel on the selected places")
    return runnable, skips


def refeed(prepared: PreparedOp, case, combo: Combo) -> None:
    """Fresh copies of the case's inputs into the prepared op's scope."""
    for specs in case_inputs(case, combo.dtype).values():
        for s in specs:
            prepared.set_input(s.name, s.data, s.lod)


def grad_op_types(case) -> list[str]:
    """The types of the grad ops the op's grad maker makes for this case ([] without)."""
    if not has_grad(case.op_type):
        return []
    try:
        prepared = prepare(case, Combo("CPU", ""))
        return sorted({op.type for op in prepared.grad_ops(tuple(case.no_grad_set or ()))})
    except Exception:
        return [case.op_type + "_grad"]


def result(check: str, status: str, combo: Combo | None, case, message: str = "",
           worst_error: float | None = None, kind: str = "") -> CheckResult:
    return CheckResult(check, status, combo.place if combo else "", combo.dtype if combo else "",
                       case.name, message, worst_error, kind=kind)


def pass_(check, combo, case, message=""):
    return result(check, PASS, combo, case, message)


def fail(check, combo, case, message, worst_error=None, kind: str = ""):
    return result(check, FAIL, combo, case, message, worst_error, kind)


# -- comparisons --------------------------------------------------------------------------
def _ordered(value: float, dtype) -> int:
    """The float's bits as an integer that orders like the floats: ULPs are differences."""
    i = int(np.array([value], dtype=dtype).view(f"i{dtype.itemsize}")[0])
    return i if i >= 0 else -(1 << (dtype.itemsize * 8 - 1)) - i


def first_difference(a, b):
    """None when `a` and `b` are bitwise identical, else (index, a_value, b_value, ulps) or a
    string for shape/dtype mismatches."""
    if a is None or b is None:
        return None if a is None and b is None else "one run produced no value"
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"shape/dtype differ: {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
    if a.tobytes() == b.tobytes():
        return None
    if a.dtype.kind in "fiub" and a.dtype.itemsize in (1, 2, 4, 8):
        u = f"u{a.dtype.itemsize}"
        k = int(np.flatnonzero(a.reshape(-1).view(u) != b.reshape(-1).view(u))[0])
        idx = np.unravel_index(k, a.shape) if a.ndim else ()
        x, y = a.reshape(-1)[k], b.reshape(-1)[k]
        ulps = abs(_ordered(x.item(), a.dtype) - _ordered(y.item(), a.dtype)) \
            if a.dtype.kind == "f" else abs(int(x) - int(y))
        return (tuple(int(i) for i in idx), x.item(), y.item(), ulps)
    return "contents differ"

