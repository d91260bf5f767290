"""float16 / bfloat16 kernels against the float64 kernel: what the `dtypes` check (accuracy,
finite range, gradients, twins) and the `precision` check (rounding) judge them by, on the
common grid (docs/low_precision.md: the table of checks and "common grid").
"""
from __future__ import annotations

import contextlib

import numpy as np

from harness.reporting.error_text import first_line
from harness.backend.case import VarSpec, normalize_slots
from harness.judging.compare import first_flagged, fmt_index
from harness.judging.numeric_gradient import NumericEngine, relative_error
from harness.backend.seam import Combo, has_grad, make_cotangents, op_refused, prepare, run_forward_backward
from harness.judging.tolerances import grad_floor, grad_tolerance
from opkit.framework.dtypes import LOW_PRECISION, bfloat16, finfo, is_float

__all__ = ["LOW_PRECISION", "PROBES", "RANGE_SCALE", "low_precision_kernels", "grid",
           "twin_problems", "accuracy_problems", "range_problems", "grad_problems",
           "rounding_problem", "GridRun"]

PROBES = 2
EPS32 = float(np.finfo(np.float32).eps)
F16_MIN_NORMAL = 2.0 ** -14
GRID_MAX = 65280.0
RANGE_SCALE = {"float16": 2.0 * float(np.sqrt(65504.0))}


def low_precision_kernels(op_type: str) -> dict[str, list[str]]:
    """{place: [float16 / bfloat16]} of the op's kernels."""
    from harness.backend.dispatch import declared

    places = declared().kernel_places(op_type).items()
    return {place: low for place, dtypes in places
            if (low := [d for d in LOW_PRECISION if d in dtypes])}


def grid(a: np.ndarray) -> np.ndarray:
    """float64 values exact in float16, bfloat16, float32 and float64."""
    b = np.clip(np.asarray(a, np.float64), -GRID_MAX, GRID_MAX).astype(bfloat16)
    b = b.astype(np.float64)
    return np.where(np.abs(b) < F16_MIN_NORMAL, 0.0, b)


def twin_problems(op_type: str, grad_types: list[str], place: str) -> list[str]:
    """The forward op has a float16 / bfloat16 kernel on `place` that a grad op lacks there
    (a grad kernel registered for one of the two only, or for neither)."""
    from harness.backend.dispatch import declared

    problems = []
    for g in grad_types:
        have = declared().kernel_places(g).get(place) if declared().has_op(g) else None
        if not have:
            continue        # no grad kernel on that place at all: `dtypes` says so
        for d in low_precision_kernels(op_type).get(place, []):
            if d not in have:
                others = [x for x in LOW_PRECISION if x in have]
                only = f" (it has {', '.join(others)} only)" if others else ""
                problems.append(f"op '{g}' has no {d} kernel on {place} while '{op_type}' has "
                                f"one{only}: {d} training stops at the gradient")
    return problems


class GridRun:
    """The case on the common grid: inputs, the float64 reference (outputs and, with `wrt`,
    gradients for a cotangent on the grid) and runs of other kernels on the same inputs."""

    def __init__(self, case, place: str, seed: int, wrt=(), scale: float | None = None):
        self.case, self.place, self.seed = case, place, seed
        self.slots = normalize_slots(case.inputs)
        self.scale, self.wrt, self.cot = scale, list(wrt), None
        self.base = self.specs("float64")
        self.ref = self.run(self.base)
        if self.wrt:
            names = [n for n, v in self.ref.items() if v is not None and is_float(v.dtype)]
            names = [n for n in (case.grad_outputs or names) if n in self.ref]
            cot = make_cotangents(self.ref, names, seed=seed)
            self.cot = {n: grid(c) for n, c in cot.items()}
            self.run(self.base, self.cot)     # the float64 grad kernels must run too

    def specs(self, dtype, perturb=None) -> dict:
        """{slot: [VarSpec]}: float inputs (scaled to `scale`) on the grid, then `perturb`ed,
        in `dtype`; other arrays copied."""
        def fresh(data):
            if not isinstance(data, np.ndarray):
                return data
            if not is_float(data.dtype):
                return data.copy()
            x = np.asarray(data, np.float64)
            if self.scale is not None:
                top = float(np.max(np.abs(x))) if x.size else 0.0
                x = x * (self.scale / top) if top > 0 and np.isfinite(top) else x
            x = grid(x)
            return (x if perturb is None else perturb(x)).astype(dtype)

        return {slot: [VarSpec(s.name, fresh(s.data), s.lengths) for s in items]
                for slot, items in self.slots.items()}

    def run(self, specs, cot=None) -> dict:
        """{name: array} of outputs and (with `cot`) 'X@GRAD' gradients of `wrt`."""
        p = prepare(self.case, Combo(self.place, ""), inputs=specs)
        return run_forward_backward(p, self.case, backward=cot is not None, wrt=self.wrt,
                                    cot=cot)

    def low(self, dtype) -> dict:
        """The run of the `dtype` kernels (with the gradients where there is a cotangent)."""
        cot = {n: c.astype(dtype) for n, c in self.cot.items()} if self.cot else None
        return self.run(self.specs(dtype), cot)

    def numeric_grads(self) -> dict:
        """{input: the float64 numeric gradient for the cotangent}; {} where there is none."""
        with contextlib.suppress(Exception):   # no numeric gradient: the grad check says why
            p = prepare(self.case, Combo(self.place, ""), inputs=self.base)
            engine = NumericEngine(p, self.cot, seed=self.seed, base_outputs=p.forward())
            return {n: engine.exact(n) for n in self.wrt if n in engine.base}
        return {}

    def conditioning(self, eps: float) -> dict:
        """{output: per-element move of ref under relative input moves of eps, / eps}."""
        rng = np.random.default_rng(self.seed)
        cond = {}
        for _ in range(PROBES):
            moved = self.run(self.specs(
                "float64", perturb=lambda x: x * (1 + eps * rng.choice([-1.0, 1.0], x.shape))))
            for n, v in moved.items():
                r = self.ref.get(n)
                if v is None or r is None or not is_float(r.dtype) or v.shape != r.shape:
                    continue
                with np.errstate(invalid="ignore", over="ignore"):
                    d = np.abs(v.astype(np.float64) - r.astype(np.float64)) / eps
                d = np.where(np.isfinite(d), d, 0.0)
                cond[n] = np.maximum(cond.get(n, 0.0), d)
        return cond

    def reduction_length(self, out: np.ndarray) -> int:
        sizes = [s.data.size for items in self.slots.values() for s in items
                 if isinstance(s.data, np.ndarray) and is_float(s.data.dtype)]
        return max(1, int(max(sizes, default=1) // max(out.size, 1)))


def _index(name, shape, k) -> str:
    return fmt_index(name, np.unravel_index(k, shape))


def _as64(a):
    return None if a is None else np.asarray(a).astype(np.float64)


def _float_pairs(ref: dict, low: dict):
    """(name, the low-precision output, it and the float64 one as float64) of each float
    output both runs give with the same shape."""
    for name, want in ref.items():
        got = low.get(name)
        if want is None or got is None or not is_float(want.dtype) or \
                np.asarray(got).shape != want.shape:
            continue
        yield name, np.asarray(got), _as64(got), _as64(want)


def accuracy_problems(run: GridRun, dtype: str, low: dict, cond: dict) -> list[str]:
    """The low-precision outputs against the float64 kernel's (docs/low_precision.md, `dtypes`);
    integer / bool outputs (indices, masks, comparisons) must be identical."""
    problems = []
    for name, want in run.ref.items():
        got = low.get(name)
        if want is None or got is None:
            continue
        got = np.asarray(got)
        g, w = _as64(got), _as64(want)
        if got.shape != want.shape:
            problems.append(f"{dtype}: output '{name}' has shape {got.shape}, float64 "
                            f"{want.shape}")
            continue
        if not is_float(want.dtype):
            bad = g != w
            if bad.any():
                k, idx = first_flagged(bad)
                problems.append(
                    f"{dtype}: {int(bad.sum())} of {w.size} elements of '{name}' differ "
                    f"from the float64 kernel on the same inputs; first {fmt_index(name, idx)}: "
                    f"{got.reshape(-1)[k].item()!r}, float64 {want.reshape(-1)[k].item()!r}")
            continue
        out_dtype = got.dtype if is_float(got.dtype) else np.dtype(dtype)
        eps, top = float(finfo(out_dtype).eps), float(finfo(out_dtype).max)
        tiny = float(finfo(out_dtype).smallest_normal)
        n = run.reduction_length(want)
        c = cond.get(name, np.abs(w))
        with np.errstate(invalid="ignore", over="ignore"):
            in_range = np.isfinite(w) & (np.abs(w) <= top)
            overflow = in_range & ~np.isfinite(g)
            bound = eps * (2 * np.abs(w) + 2 * n * c) + tiny
            bad = in_range & np.isfinite(g) & (np.abs(g - w) > bound)
        if overflow.any():
            k, idx = first_flagged(overflow)
            problems.append(f"{dtype}: output '{name}' is {g.reshape(-1)[k]} at "
                            f"{fmt_index(name, idx)} where the float64 kernel gives "
                            f"{w.reshape(-1)[k]:.6g}, within {out_dtype.name}'s range "
                            f"({int(overflow.sum())} of {w.size} elements)")
        elif bad.any():
            with np.errstate(invalid="ignore", divide="ignore"):
                excess = np.where(bad, np.abs(g - w) / bound, -1.0)
            k = int(np.argmax(excess))
            problems.append(
                f"{dtype}: {int(bad.sum())} of {w.size} elements of '{name}' are further from "
                f"the float64 kernel than the storage dtype's worst case (eps {eps:.3g} x "
                f"(2|ref| + 2 x reduction length {n} x conditioning)); worst "
                f"{_index(name, w.shape, k)}: {g.reshape(-1)[k]:.6g}, float64 "
                f"{w.reshape(-1)[k]:.6g}")
    return problems


def range_problems(run: GridRun, dtype: str, low: dict) -> list[str]:
    """On the range-probe run (inputs scaled to RANGE_SCALE): inf / NaN where the float64
    kernel's output is finite and within the dtype's range."""
    problems = []
    top = float(finfo(dtype).max)
    for name, _, g, w in _float_pairs(run.ref, low):
        with np.errstate(invalid="ignore", over="ignore"):
            overflow = np.isfinite(w) & (np.abs(w) <= top / 2) & ~np.isfinite(g)
        if overflow.any():
            k, idx = first_flagged(overflow)
            problems.append(
                f"{dtype}: overflow in an intermediate: with inputs up to "
                f"{run.scale:.4g} in magnitude, output '{name}' is {g.reshape(-1)[k]} at "
                f"{fmt_index(name, idx)} where the float64 kernel gives "
                f"{w.reshape(-1)[k]:.6g} (within {dtype}'s range, max {top:g}): compute the "
                f"intermediates in float32 ({int(overflow.sum())} of {w.size} elements)")
    return problems


def grad_problems(run: GridRun, dtype: str, low: dict, tol: float, numeric: dict) -> list[str]:
    """Low-precision analytic gradients against the float64 numeric ones (Paddle's metric
    |analytic - numeric| / max(|numeric|, floor), the floor per dtype: `grad_floor`)."""
    problems = []
    floor = grad_floor(dtype)
    for name, num in numeric.items():
        got = low.get(name + "@GRAD")
        if got is None:
            problems.append(f"{dtype}: no gradient of {name} (the {dtype} grad ops did not "
                            f"produce {name}@GRAD)")
            continue
        a = _as64(got)
        if a.shape != num.shape:
            problems.append(f"{dtype}: gradient of {name} has shape {a.shape}, expected "
                            f"{num.shape}")
            continue
        with np.errstate(invalid="ignore"):
            err = relative_error(a, num, floor)
        err = np.where(np.isnan(err), np.inf, err)
        bad = err > tol
        if bad.any():
            k = int(np.argmax(err))
            problems.append(
                f"{dtype}: gradient of {name}: {int(bad.sum())} of {a.size} elements exceed "
                f"max relative error {tol:g} against the float64 numeric gradient; worst "
                f"{_index(name, num.shape, k)}: analytic {a.reshape(-1)[k]:.6g}, numeric "
                f"{num.reshape(-1)[k]:.6g}, error {err.reshape(-1)[k]:.4g}")
    return problems


def _spacing(x: np.ndarray, dtype) -> np.ndarray:
    """The distance between neighbouring values of `dtype` at |x| (its subnormal spacing
    below its smallest normal)."""
    info = finfo(dtype)
    eps, tiny = float(info.eps), float(info.smallest_normal)
    ax = np.maximum(np.abs(x), tiny)
    with np.errstate(divide="ignore"):
        return np.exp2(np.floor(np.log2(ax))) * eps


def rounding_problem(ref: dict, f32: dict | None, low: dict, dtype: str) -> tuple:
    """(problem or None, worst excess in ulps): the low-precision outputs against
    `ulp/2 + 2 |f32 - ref| + 4 eps32 |ref|` (docs/low_precision.md, `precision`)."""
    worst = 0.0
    for name, got, g, w in _float_pairs(ref, low):
        if not is_float(got.dtype):
            continue
        out_dtype = got.dtype
        f = _as64(f32.get(name)) if f32 else None
        if f is None or f.shape != w.shape:
            f = w
        top = float(finfo(out_dtype).max)
        with np.errstate(invalid="ignore", over="ignore"):
            judged = np.isfinite(w) & np.isfinite(g) & (np.abs(w) <= top)
            if not judged.any():
                continue
            ulp = _spacing(np.maximum(np.abs(w), np.abs(g)), out_dtype)
            f32_err = np.where(np.isfinite(f), np.abs(f - w), 0.0)
            allowed = ulp / 2 + 2 * f32_err + 4 * EPS32 * np.abs(w) + \
                float(finfo(out_dtype).smallest_subnormal)
            err = np.abs(g - w)
            bad = judged & (err > allowed)
            in_ulps = np.where(judged, err / ulp, 0.0)
        worst = max(worst, float(in_ulps.max()))
        if not bad.any():
            continue
        k = int(np.argmax(np.where(bad, in_ulps, -1.0)))
        where = (f"worst {_index(name, w.shape, k)}: {g.reshape(-1)[k]:.8g}, float64 "
                 f"{w.reshape(-1)[k]:.8g} ({in_ulps.reshape(-1)[k]:.3g} ulp of {out_dtype.name})")
        inexact = judged & (err > 0)
        toward_zero = inexact & (np.abs(g) < np.abs(w))
        share = int(bad.sum())
        if inexact.sum() >= 8 and toward_zero.sum() == inexact.sum():
            return (f"{dtype}: output '{name}' is rounded toward zero (truncated) instead of to "
                    f"nearest even: {share} of {w.size} elements are more than half an ulp "
                    f"from the float64 result and every inexact one is smaller in magnitude; "
                    f"{where}"), worst
        return (f"{dtype}: output '{name}' is not one rounding of a float32 computation: {share} "
                f"of {w.size} elements are more than half an ulp (+ float32's error) from the "
                f"float64 result, as when the kernel accumulates or computes in {dtype} "
                f"itself (its error grows with the reduction length like {dtype}'s epsilon); "
                f"{where}"), worst
    return None, worst


def judge(case, places: list[str], seed: int, grad_types: list[str]) -> dict[str, list[str]]:
    """{place: problems} of the op's float16 / bfloat16 kernels on the case, on each of
    `places` where it has them (the `dtypes` check): accuracy, range (float16), gradients
    against the float64 numeric gradient, and grad kernels for both dtypes."""
    kernels = low_precision_kernels(case.op_type)
    out: dict[str, list[str]] = {}
    wrt = list(case.grad_inputs or ()) if has_grad(case.op_type) else []
    for place in places:
        dtypes = kernels.get(place)
        if not dtypes:
            continue
        problems = out.setdefault(place, [])
        problems += twin_problems(case.op_type, grad_types, place)
        try:
            run = GridRun(case, place, seed, wrt=wrt)
            cond = run.conditioning(float(finfo("bfloat16").eps))
        except Exception as exc:  # noqa: BLE001 - the float64 kernel refuses: other checks say
            if not op_refused(exc):
                problems.append(f"the float64 kernel raised on the case's inputs rounded to "
                                f"bfloat16: {first_line(exc)}")
            continue
        numeric = run.numeric_grads() if run.cot else {}
        for dtype in dtypes:
            try:
                low = run.low(dtype)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{dtype}: the {dtype} kernels raised where the float64 ones "
                                f"did not: {type(exc).__name__}: {first_line(exc)}")
                continue
            problems += accuracy_problems(run, dtype, low, cond)
            problems += grad_problems(run, dtype, low, grad_tolerance(dtype, 0.005), numeric)
            scale = RANGE_SCALE.get(dtype)
            if scale is not None:
                try:
                    probe = GridRun(case, place, seed, scale=scale)
                except Exception:  # noqa: BLE001 - the float64 kernel refuses large inputs
                    continue
                try:
                    problems += range_problems(probe, dtype, probe.low(dtype))
                except Exception as exc:  # noqa: BLE001
                    if not op_refused(exc):
                        problems.append(f"{dtype}: with inputs up to {scale:.4g} in magnitude "
                                        f"the {dtype} kernel raised: "
                                        f"{first_line(exc)}")
    return out


def rounding(case, place: str, dtypes: list[str], seed: int) -> dict[str, tuple]:
    """{dtype: (problem or None, worst ulps)} of the `precision` check on one place."""
    run = GridRun(case, place, seed)
    from harness.backend.dispatch import declared

    has_f32 = "float32" in declared().kernel_places(case.op_type).get(place, [])
    f32 = run.run(run.specs("float32")) if has_f32 else None
    return {d: rounding_problem(run.ref, f32, run.low(d), d) for d in dtypes}
