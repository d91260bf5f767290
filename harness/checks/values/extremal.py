"""`extremal`: wherever the oracle (the test's `reference()`, else the float64 kernel) is
finite after casting to the run dtype, outputs and gradients are finite (docs/harness.md,
"Input variants")."""
from __future__ import annotations

import numpy as np

from harness.backend.case import normalize_slots
from harness.checks.base import Check, NonFinite
from harness.judging.compare import first_flagged, fmt_index
from harness.backend.seam import Combo, run as run_case
from harness.inputs.variants.extremal import WIDE
from harness.reporting.values import fmt_value
from opkit.framework.dtypes import max_finite
from opkit.framework.grad_maker import GRAD_SUFFIX

HEADROOM = 8.0


class ExtremalCheck(Check):
    name = "extremal"
    description = "large, zero-row and tiny inputs: finite wherever the oracle is finite"
    order = 130
    variants = ("extremal",)
    needs_float = True

    def verdict(self, derived, context):
        return self.compare_each(
            derived, context,
            # one float64 oracle per place, shared by its dtypes
            base=lambda combo: _oracle(derived, Combo(combo.place, "float64"), context),
            base_key=lambda combo: combo.place,
            base_skip=lambda exc: (f"{derived.note}: the float64 run raises "
                                   f"({type(exc).__name__}); no oracle"),
            variant=lambda combo: run_case(derived.case, combo, context),
            compare=lambda oracle, got, combo: _compare(
                oracle, got, combo, wide=derived.info.get("kind") in WIDE),
            refused="skip")


def _compare(oracle, got, combo, wide=False):
    """None, or (the first non-finite element where the oracle is finite, NonFinite). `wide`
    (max_finite, spread): outputs only, where the oracle is within the run dtype's largest
    finite value / HEADROOM (a result at the top of the range may overflow on its way)."""
    overflowing = _forward_beyond_run_dtype(oracle, got)
    for name, want in oracle.items():
        have = got.get(name)
        if want is None or have is None or np.asarray(want).dtype.kind != "f" or \
                wide and name.endswith(GRAD_SUFFIX):
            continue
        want, have = np.asarray(want), np.asarray(have)
        # judged only where the oracle's value is representable in the run dtype:
        # exp(100) is finite in float64 but beyond float32's max, so inf is right
        run_dt = have.dtype if have.dtype.kind == "f" else want.dtype
        with np.errstate(all="ignore"):
            representable = np.isfinite(want.astype(run_dt))
            if wide:
                representable &= np.abs(want) < max_finite(run_dt) / HEADROOM
        if overflowing and name.endswith(GRAD_SUFFIX):
            # a forward output is beyond the run dtype's range (exp near 88.7 in float32):
            # inf there is right, and the gradients made from it may be inf too, even where
            # the float64 gradient would fit
            continue
        if want.shape != have.shape:
            continue
        bad = representable & ~np.isfinite(have)
        if bad.any():
            k, idx = first_flagged(bad)
            return (f"{fmt_index(name, idx)} is {fmt_value(have.reshape(-1)[k].item())} where "
                    f"the oracle ({oracle.get('@source')}) is finite: "
                    f"{fmt_value(want.reshape(-1)[k].item())} ({int(bad.sum())} of {bad.size} "
                    f"elements non-finite)", NonFinite)
    return None


def _forward_beyond_run_dtype(oracle: dict, got: dict) -> bool:
    """Whether a forward output of the oracle is finite but beyond the range of the dtype
    the run gave it in (so the run's inf there is right)."""
    for name, want in oracle.items():
        have = got.get(name)
        if name.startswith("@") or name.endswith(GRAD_SUFFIX) or want is None or \
                have is None:
            continue
        want, have = np.asarray(want), np.asarray(have)
        if want.dtype.kind != "f" or have.dtype.kind != "f":
            continue
        with np.errstate(all="ignore"):
            if (np.isfinite(want) & ~np.isfinite(want.astype(have.dtype))).any():
                return True
    return False


def _oracle(derived, combo64, context):
    """{name: array} of the oracle (raises when the float64 run raises: no oracle)."""
    case = derived.case
    with np.errstate(all="ignore"):
        runs = dict(run_case(case, combo64, context))
    source = "the float64 kernel"
    if derived.base.reference is not None and not case.outputs:
        try:
            with np.errstate(all="ignore"):
                ref = derived.base.reference(case.inputs, case.attrs) or {}
            for specs in normalize_slots(ref).values():
                for s in specs:
                    if isinstance(s.data, np.ndarray) and s.name in runs:
                        runs[s.name] = s.data
            source = "reference() and the float64 kernel's gradients"
        except Exception:  # noqa: BLE001 - a reference that cannot take these values
            pass
    runs["@source"] = source
    return runs


CHECK = ExtremalCheck()
