"""`precision`: float32 kernels compute in float32 (integer outputs identical to the float64
kernel's), float64 kernels in float64, float16 / bfloat16 kernels round once
(docs/harness.md, "`precision`")."""
from __future__ import annotations

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import VarSpec, normalize_slots
from harness.checks.base import Check, WrongValue
from harness.judging.compare import first_flagged, fmt_index
from harness.backend.context import Combo, gpu_unavailable_reason, grad_outputs, has_grad
from harness.judging.low_precision import low_precision_kernels, rounding
from harness.backend.seam import make_cotangents, prepare, run_forward_backward
from harness.reporting.values import fmt_value
from opkit.framework.grad_maker import GRAD_SUFFIX

NAME = "precision"
PRECISION_FACTOR = 64.0     # allowed multiple of eps32 * (|value| + conditioning)
PROBES = 4                  # random relative perturbations that estimate the conditioning
EPS32 = float(np.finfo(np.float32).eps)
TINY32 = float(np.finfo(np.float32).tiny)   # absolute floor of the bound
EPS64 = float(np.finfo(np.float64).eps)
RESOLUTION_STEP = 2.0 ** -30      # float64 resolution: relative input step, far below eps32
RESOLUTION_REF_STEP = 2.0 ** -20  # ... and the step of the first-order prediction
RESOLUTION_SIGNIFICANT = 1e4      # predicted moves above this x eps64 x |value| are judged
RESOLUTION_FAR_STEP = 2.0 ** -18  # a 4x larger move still: first order where it moves 4x


def _signs(rng, shape):
    return rng.choice([-1.0, 1.0], shape)


def _specs(case, dtype, scale=None, rng=None):
    """The case's inputs rounded to float32, fed as `dtype` (optionally perturbed by one
    relative float32 epsilon in random directions, in float64)."""
    out = {}
    for slot, items in normalize_slots(case.inputs).items():
        out[slot] = []
        for s in items:
            data = s.data
            if isinstance(data, np.ndarray) and data.dtype.kind == "f":
                data = data.astype(np.float32).astype(np.float64)
                if scale is not None:
                    data = data * (1 + scale * _signs(rng, data.shape))
                data = data.astype(dtype)
            elif isinstance(data, np.ndarray):
                data = data.copy()
            out[slot].append(VarSpec(s.name, data, s.lengths))
    return out


def _run(case, place, dtype, cot=None, wrt=(), scale=None, rng=None, move=None,
         cot_too=True):
    """{name: float64 array} of outputs and (with `cot`) input gradients ('X@GRAD') on
    `_specs`' inputs (`scale`: moved, and the cotangent too unless not `cot_too`); the grad
    ops read the forward outputs `move`d, when given."""
    p = prepare(case, Combo(place, ""), inputs=_specs(case, dtype, scale, rng))
    if cot is None or not wrt:
        return run_forward_backward(p, case, backward=False)
    if scale and cot_too:
        cot = {n: c * (1 + scale * _signs(rng, c.shape)) for n, c in cot.items()}
    return run_forward_backward(p, case, wrt=wrt, cot=cot, move_outputs=move)


def _rounded_outputs(rng):
    """Every float forward output moved by one relative float32 epsilon in random
    directions: what a correct float32 forward may hand its grad ops."""
    def move(outs):
        return {n: v * (1 + EPS32 * _signs(rng, v.shape)) for n, v in outs.items()
                if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size}
    return move


class PrecisionCheck(Check):
    name = NAME
    description = ("float32 outputs and gradients agree with the float64 kernel within a "
                   "bound from eps32 and the case's conditioning")
    order = 160
    needs_float = True

    def verdict(self, derived, context):
        case, seed = derived.case, context.seed
        kernels = backends.declared().kernel_places(case.op_type)
        # float64 resolution: on the OpTest's own case (a generated one adds nothing)
        resolution = not getattr(context, "generated", False)

        def places(runnable):
            """One float32 run per planned place that has both float kernels."""
            both = [c.place for c in runnable
                    if {"float32", "float64"} <= set(kernels.get(c.place, []))]
            return [Combo(place, "float32") for place in dict.fromkeys(both)]

        def judge(ref, got, combo):
            problem, worst = _judge_place(ref, got)
            if problem:
                return [self.failed(derived, combo, problem, kind=WrongValue, worst=worst)]
            problem = _check_resolution(case, combo.place, seed, ref) if resolution else None
            if problem:
                return [self.failed(derived, Combo(combo.place, "float64"), problem,
                                    kind=WrongValue)]
            return [self.passed(derived, combo, f"within {worst:.2g} of the bound", worst)]

        results = self.compare_each(
            derived, context, combos=places,
            base=lambda combo: _reference(case, combo.place, seed),
            # the float32 run on the float64 side's (float32-representable) cotangent
            variant=lambda combo, ref: _run(case, combo.place, "float32", *ref[1:3]),
            variant_takes_base=True, compare=judge, base_fails="fail")
        results += self.low_precision(derived, context)
        return results or [self.skipped(derived.base, "needs float32 and float64 kernels on "
                                        "one place (the dtypes check reports a missing one)")]

    def low_precision(self, derived, context) -> list:
        """float16 / bfloat16 kernels: one rounding of a float32 computation
        (harness.judging.low_precision.rounding), on each selected place where the op has them."""
        out = []
        for place, dtypes in low_precision_kernels(derived.case.op_type).items():
            if place not in context.selected_places() or \
                    (place == "GPU" and gpu_unavailable_reason()):
                continue
            try:
                verdicts = rounding(derived.case, place, dtypes, context.seed)
            except Exception:  # noqa: BLE001 - the float64 kernel refuses: the float32
                continue       # comparison above reports it
            for dtype, (problem, worst) in verdicts.items():
                combo = Combo(place, dtype)
                out.append(self.failed(derived, combo, problem, kind=WrongValue, worst=worst)
                           if problem else
                           self.passed(derived, combo, f"within half an ulp of {dtype} plus "
                                       f"float32's error (worst {worst:.2g} ulp)", worst))
        return out


def _reference(case, place, seed):
    """The float64 side of one place: (results, cotangent (float32-representable), the
    differentiated inputs, conditioning per result)."""
    wrt = list(case.grad_inputs) if case.grad_inputs and has_grad(case.op_type) else []
    ref = _run(case, place, "float64")
    cot = None
    if wrt:
        cot = make_cotangents(ref, grad_outputs(case, ref), seed=seed)
        cot = {n: c.astype(np.float32).astype(np.float64) for n, c in cot.items()}
        ref = _run(case, place, "float64", cot, wrt)
    rng = np.random.default_rng(seed + 17)
    cond = {}

    def widen(probe, grads_only, size=False):
        """cond at least how far `probe` moved each result, in eps32 (`size`: its size)."""
        for n, v in ref.items():
            pv = probe.get(n)
            if v is None or pv is None or v.dtype.kind != "f" or pv.shape != v.shape or \
                    (grads_only and not n.endswith(GRAD_SUFFIX)):
                continue
            pv = np.asarray(pv, np.float64)
            cond[n] = np.maximum(cond.get(n, 0.0), np.abs(pv) if size else np.abs(pv - v) / EPS32)

    for _ in range(PROBES):
        widen(_run(case, place, "float64", cot, wrt, scale=EPS32, rng=rng), False)
    if wrt:
        # a gradient that cancels is rounded at the size of its terms: the backward on
        # |cotangent| gives that size (docs/harness.md, "`precision`")
        widen(_run(case, place, "float64", {n: np.abs(c) for n, c in cot.items()}, wrt), True,
              size=True)
        # ... and moves by one float32 rounding of the forward outputs the grad ops read
        for _ in range(PROBES):
            try:
                probe = _run(case, place, "float64", cot, wrt, move=_rounded_outputs(rng))
            except Exception:  # noqa: BLE001 - a backend that cannot feed forward outputs
                break
            widen(probe, True)
    return ref, cot, wrt, cond


def _judge_place(reference, got):
    """(problem or None, worst |diff| / bound) of the float32 results `got` against the
    float64 side `reference` (`_reference`)."""
    ref, _, _, cond = reference
    worst = 0.0
    for n, v64 in ref.items():
        v32 = got.get(n)
        if v64 is None or v32 is None:
            if (v64 is None) != (v32 is None):
                return f"{n}: produced by one of the float32/float64 kernels only", worst
            continue
        if v32.shape != v64.shape:
            return f"{n}: shape {v32.shape} in float32, {v64.shape} in float64", worst
        if v64.dtype.kind != "f":
            if not np.array_equal(v32, v64):
                k, idx = first_flagged(v32 != v64)
                return (f"{fmt_index(n, idx)}: {fmt_value(v32.reshape(-1)[k])} from the float32 "
                        f"kernel, {fmt_value(v64.reshape(-1)[k])} from the float64 kernel"), worst
            continue
        a = np.asarray(v32, np.float64)
        c = cond.get(n, np.zeros(v64.shape))
        bound, diff, ratio = _ratios(a, v64, c)
        if ratio.size and ratio.max() > 1.0 and not n.endswith(GRAD_SUFFIX) and \
                _equal_up_to_sign(a, v64, c):
            continue    # vectors defined up to sign (eigenvectors): each kernel picked one
        peak = float(ratio.max()) if ratio.size else 0.0
        worst = max(worst, peak)
        if peak > 1.0:
            k = int(np.argmax(ratio))
            at = lambda x: float(x.reshape(-1)[k])   # noqa: B023 - used before k changes
            what = "gradient" if n.endswith(GRAD_SUFFIX) else "output"
            return (f"{what} {fmt_index(n, np.unravel_index(k, v64.shape))}: float32 kernel "
                    f"{fmt_value(at(a))}, float64 kernel {fmt_value(at(v64))} on the same "
                    f"float32 inputs: |diff| {at(diff):.3g} > bound {at(bound):.3g} = "
                    f"{PRECISION_FACTOR:g} x eps32 x (|value| {abs(at(v64)):.3g} + "
                    f"conditioning {at(c):.3g}) (floor tiny32 {TINY32:.3g}); "
                    f"{int((ratio > 1).sum())} of {ratio.size} elements exceed it: the "
                    "float32 kernel computes in lower precision than float32"), worst
    return None, worst


def _far_run(case, place, seed, cot, wrt) -> dict:
    """The float64 results with every input moved by RESOLUTION_FAR_STEP (the same random
    signs as the resolution runs; {} when the kernel refuses)."""
    try:
        return _run(case, place, "float64", cot, wrt, RESOLUTION_FAR_STEP,
                    np.random.default_rng(seed + 29), cot_too=False)
    except Exception:  # noqa: BLE001 - the other checks report a kernel that raises
        return {}


def _first_order(far, big, v) -> np.ndarray:
    """Where the change at the far move is 4x (2x to 6x) the change at the reference move:
    the result moves at first order there (False everywhere when `far` is missing)."""
    if far is None or far.shape != v.shape:
        return np.zeros(v.shape, bool)
    scale = RESOLUTION_FAR_STEP / RESOLUTION_REF_STEP
    with np.errstate(invalid="ignore", over="ignore"):
        want = (big - v) * scale
        return np.isfinite(far) & (np.abs((far - v) - want) <= 0.5 * np.abs(want))


def _ratios(a, v64, c):
    """(bound, |diff|, |diff| / bound) of float32 results `a` against float64 `v64` with
    conditioning `c` (0 where equal, NaN in both, or the same infinity)."""
    bound = np.maximum(PRECISION_FACTOR * EPS32 * (np.abs(v64) + c), TINY32)
    diff = np.abs(a - v64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(diff == 0, 0.0, diff / np.where(bound > 0, bound, np.inf))
    ratio = np.where(np.isnan(diff) & ~np.isnan(v64), np.inf, ratio)
    ratio = np.where(np.isnan(v64) & np.isnan(a), 0.0, np.nan_to_num(ratio, nan=np.inf))
    ratio = np.where(a == v64, 0.0, ratio)      # the same infinity: inf - inf is no error
    return bound, diff, ratio


def _equal_up_to_sign(a, v64, c) -> bool:
    """Whether the float32 result is within the bound once whole vectors (along the last
    or the second-to-last axis) are negated: outputs defined only up to sign, as
    eigenvectors (each kernel picks a sign per vector). At least one vector is negated."""
    if a.ndim < 2 or not np.isfinite(a).all() or not np.isfinite(v64).all():
        return False
    for axis in {-1, -2} & set(range(-a.ndim, 0)):
        sign = np.where(np.sum(a * v64, axis=axis, keepdims=True) < 0, -1.0, 1.0)
        if (sign < 0).any() and _ratios(a * sign, v64, c)[2].max() <= 1.0:
            return True
    return False


def _check_resolution(case, place, seed, ref=None):
    """The float64 kernels (forward and grad) resolve input changes below float32's precision
    (docs/harness.md, "Float64 resolution"): None when they do (or it does not apply), else
    the problem. `ref`: the float64 side of `_reference`."""
    if "float64" not in backends.declared().kernel_places(case.op_type).get(place, []) or \
            ref is None or "seed" in backends.describe(case.op_type).attrs:
        return None   # no float64 kernel, or a random op (other draws, not other values)
    base, cot, wrt, _ = ref
    try:   # every float input moved by a relative step (the same random signs for both)
        small, large = [_run(case, place, "float64", cot, wrt, step,
                             np.random.default_rng(seed + 29), cot_too=False)
                        for step in (RESOLUTION_STEP, RESOLUTION_REF_STEP)]
    except Exception:  # noqa: BLE001 - the other checks report a kernel that raises
        return None
    ratio = RESOLUTION_STEP / RESOLUTION_REF_STEP
    far = None
    for n, v in base.items():
        if v is None or v.dtype != np.float64:
            continue   # an output the op gives in float32 whatever the run (a dtype attr)
        s, big = small.get(n), large.get(n)
        if s is None or big is None or s.shape != v.shape or big.shape != v.shape:
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            moved = s - v
            predicted = (big - v) * ratio
            judged = np.isfinite(predicted) & np.isfinite(moved) & \
                (np.abs(predicted) > RESOLUTION_SIGNIFICANT * EPS64 * np.abs(v))
            off = judged & (np.abs(moved - predicted) > 0.5 * np.abs(predicted))
        if off.any() and int(off.sum()) * 2 > int(judged.sum()):
            # a result whose first-order change vanishes there (det at a singular matrix)
            # moves at second order: the linear prediction does not apply; judged are the
            # elements whose change grows 4x from the reference move to a 4x larger one
            if far is None:
                far = _far_run(case, place, seed, cot, wrt)
            judged &= _first_order(far.get(n), big, v)
            off &= judged
        n_judged, n_off = int(judged.sum()), int(off.sum())
        if n_judged and n_off * 2 > n_judged:
            err = np.where(off, np.abs(moved - predicted) / np.maximum(np.abs(predicted),
                                                                        1e-300), -1.0)
            k = int(np.argmax(err))
            idx = np.unravel_index(k, v.shape)
            what = "gradient" if n.endswith(GRAD_SUFFIX) else "output"
            return (f"the float64 kernel does not resolve input changes below float32's "
                    f"precision: every float input moved by a relative {RESOLUTION_STEP:.3g} "
                    f"(1/{EPS32 / RESOLUTION_STEP:g} of eps32) moved {what} "
                    f"{fmt_index(n, idx)} (value {fmt_value(float(v.reshape(-1)[k]))}) by "
                    f"{fmt_value(float(moved.reshape(-1)[k]))}, expected "
                    f"{fmt_value(float(predicted.reshape(-1)[k]))} (first order, from a "
                    f"{RESOLUTION_REF_STEP / RESOLUTION_STEP:g}x larger move); {n_off} of "
                    f"{n_judged} judged elements are off by more than half: the float64 "
                    f"kernel computes in float32 (or lower) somewhere")
    return None


CHECK = PrecisionCheck()
