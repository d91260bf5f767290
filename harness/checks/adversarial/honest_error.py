"""`honest_error`: an error that is honest, not just small (issue 48).

A kernel within tolerance can still be another function: its output times (1 + 0.9 rtol), a
series that is exact near the test's values and drifts away from them, a float32 sum for
long rows. Once per op, on its first case with a `reference()` that computes in float64,
each CPU float kernel's outputs are judged against that float64 oracle on three cases: the
case (its float inputs rounded to float32, so both dtypes see the same values), the case
with every float input x 4 (magnitude), and with every float input tiled x 16 along its last
axis (size). Each element's error is normalised by what rounding can explain there:
`e = (kernel - oracle) / (|oracle| + conditioning + max|oracle| / 64)` (the floor: a value
that cancels to almost 0, gelu's float32 tail, is judged at the output's scale), the conditioning being how far the
oracle moves when every float input moves by a relative 2^-20 in random directions (the
larger of 2 probes, per relative unit). The kernel fails when

* its error is **biased**: the mean of e (or of e times the oracle's sign: an error in the
  direction of the value) exceeds `BIAS_UNITS` x eps (float32) or 1e-3 x the float64 output
  rtol (float64) AND is significant, |mean| / (sd / sqrt(n)) > `Z` over n >= 8 elements -- a
  correctly rounded kernel's errors average out;
* an element's |e| exceeds what rounding explains: `MAX_UNITS` x eps (float32), 1e-2 x the
  float64 output rtol (float64).

A derived case the op or reference() refuses, elements where the oracle or the kernel is not
finite (`extremal`'s business), outputs that are not float and oracles that are not float64
are left out.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import as_value, map_inputs, normalize_slots
from harness.checks.base import Check, WrongValue
from harness.judging.compare import fmt_index
from harness.checks.laws.shared import ReferenceRaised, reference
from harness.backend.seam import Combo, run
from harness.judging.tolerances import output_tolerance

BIAS_UNITS = 8          # float32: a mean error above 8 eps (of |value| + conditioning)
MAX_UNITS = 256         # float32: one element above 256 eps
Z = 6.0                 # the bias must be this many standard errors from 0
STEP = 2.0 ** -20       # relative move of the conditioning probes
PROBES = 2
FLOOR = 1.0 / 64        # x the output's largest |value|: a floor on |value| + conditioning


def _mapped(case, fn):
    """The case with every float input replaced by fn(array) (others as they are)."""
    def one(s):
        d = s.data
        if isinstance(d, np.ndarray) and d.dtype.kind == "f":
            return as_value(s, np.ascontiguousarray(fn(d.astype(np.float64))))
        return as_value(s)
    return replace(case, inputs=map_inputs(case.inputs, one), outputs={})


def derived_cases(case) -> list:
    """(what, case) pairs: the case rounded to float32, x 4, tiled x 16 along the last axis."""
    def r32(a):
        return a.astype(np.float32).astype(np.float64)
    out = [("the case (inputs rounded to float32)", _mapped(case, r32)),
           ("every float input x 4", _mapped(case, lambda a: r32(a * 4.0)))]
    if not any(s.lengths for ss in normalize_slots(case.inputs).values() for s in ss):
        out.append(("every float input tiled x 16 along its last axis",
                    _mapped(case, lambda a: r32(np.tile(a, (1,) * (a.ndim - 1) + (16,))
                                                if a.ndim else a))))
    return out


def _oracle(case):
    """{name: float64 array} from reference(), or None (it raised, or is not float64)."""
    try:
        want = reference(case, Combo("CPU", "float64"))
    except ReferenceRaised:
        return None
    if want is None:
        return None
    out = {}
    for s in (s for ss in want.values() for s in ss):
        a = np.asarray(s.data)
        if a.dtype.kind == "f":
            if a.dtype != np.float64:
                return None
            out[s.name] = a
    return out or None


def conditioning(case, want: dict, rng) -> dict | None:
    """{name: per element |d oracle| / STEP}, the larger over PROBES random relative moves."""
    cond = {n: np.zeros_like(w) for n, w in want.items()}
    for _ in range(PROBES):
        moved = _mapped(case, lambda a: a * (1 + STEP * rng.choice([-1.0, 1.0], a.shape)))
        got = _oracle(moved)
        if got is None:
            return None
        for n, w in want.items():
            g = got.get(n)
            if g is None or g.shape != w.shape:
                return None
            with np.errstate(invalid="ignore", over="ignore"):
                cond[n] = np.fmax(cond[n], np.abs(g - w) / STEP)
    return cond


def judge(name, got, want, cond, eps, bias_bound, max_bound):
    """None, or a message: the normalised error's bias or its worst element."""
    g = np.asarray(got, np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        finite = np.abs(want[np.isfinite(want)])
        floor = FLOOR * (float(finite.max()) if finite.size else 0.0)
        denom = np.abs(want) + cond + floor
        ok = np.isfinite(g) & np.isfinite(want) & np.isfinite(denom) & (denom > 0)
        e = np.where(ok, (g - want) / np.where(ok, denom, 1.0), 0.0)
    vals = e[ok]
    n = vals.size
    if n >= 8:
        signs = np.sign(want[ok])
        for how, v in (("signed", vals), ("in the direction of the value", vals * signs)):
            m, sd = float(v.mean()), float(v.std(ddof=1))
            z = abs(m) / (sd / np.sqrt(n)) if sd > 0 else (np.inf if m else 0.0)
            if abs(m) > bias_bound and z > Z:
                k = int(np.argmax(np.abs(e).reshape(-1)))
                idx = np.unravel_index(k, e.shape)
                return (f"'{name}': the error is biased: mean {how} error {m:+.3g} (in units of "
                        f"|value| + conditioning) over {n} elements, {z:.1f} standard errors "
                        f"from 0 (bound {bias_bound:.3g}, z > {Z:g}); e.g. "
                        f"{fmt_index(name, idx)}: kernel {g.reshape(-1)[k]!r}, float64 oracle "
                        f"{want.reshape(-1)[k]!r}")
    if n:
        k = int(np.argmax(np.abs(e).reshape(-1)))
        worst = abs(float(e.reshape(-1)[k]))
        if worst > max_bound:
            idx = np.unravel_index(k, e.shape)
            return (f"{fmt_index(name, idx)}: kernel {g.reshape(-1)[k]!r}, float64 oracle "
                    f"{want.reshape(-1)[k]!r}: error {worst:.3g} x (|value| + conditioning "
                    f"{cond.reshape(-1)[k]:.3g}), more than rounding explains (bound "
                    f"{max_bound:.3g})")
    return None


class HonestErrorCheck(Check):
    name = "honest_error"
    description = ("the kernel's error against a float64 oracle is unbiased and no larger than "
                   "rounding explains, at the case's values, x 4 and at 16x the size")
    order = 197
    scope = "op"
    needs_float = True

    def applies(self, case, context):
        if case.reference is None:
            return "no reference(): no float64 oracle to judge the error against"
        proto = backends.proto(case.op_type)
        if proto is not None and proto.attr("seed") is not None:
            return "a random op (attr seed)"
        return None

    def verdict(self, derived, context):
        case = derived.case
        skips: list = []
        runnable, _ = self.plan(derived, context, skips)
        combos = [c for c in runnable if c.place == "CPU" and c.dtype in ("float32", "float64")]
        if not combos:
            return skips or [self.skipped(derived.base, "no CPU float kernel")]
        rng = np.random.default_rng([int(getattr(context, "seed", 0) or 0), 4848])
        opts = case.options or {}
        rtol64 = output_tolerance("float64", None, opts.get("atol"), opts.get("rtol"))[1]
        bounds = {"float32": (BIAS_UNITS * np.finfo(np.float32).eps,
                              MAX_UNITS * np.finfo(np.float32).eps),
                  "float64": (max(1e-3 * rtol64, 64 * np.finfo(np.float64).eps),
                              max(1e-2 * rtol64, 1e4 * np.finfo(np.float64).eps))}
        judged = {c.dtype: 0 for c in combos}
        for what, dc in derived_cases(case):
            want = _oracle(dc)
            if want is None:
                continue
            cond = conditioning(dc, want, rng)
            if cond is None:
                continue
            for combo in combos:
                try:
                    got = run(dc, combo, None, backward=False)
                except Exception:  # noqa: BLE001 - refused, or raised: other checks say so
                    continue
                for n, w in want.items():
                    g = got.get(n)
                    if g is None or np.shape(g) != w.shape or np.asarray(g).dtype.kind != "f":
                        continue
                    dt = np.asarray(g).dtype.name
                    bias_b, max_b = bounds.get(dt, bounds["float32"])
                    problem = judge(n, g, w, cond[n], np.finfo(np.asarray(g).dtype).eps,
                                    bias_b, max_b)
                    if problem:
                        return skips + [self.failed(
                            derived, combo, f"the {combo.dtype} kernel on {what}: {problem}",
                            kind=WrongValue)]
                    judged[combo.dtype] += 1
        out = list(skips)
        for combo in combos:
            if judged[combo.dtype]:
                out.append(self.passed(derived, combo, f"{judged[combo.dtype]} outputs judged"))
            else:
                out.append(self.skipped(derived.base, "reference() gives no float64 output "
                                        "on the case (or refuses it)", combo))
        return out


CHECK = HonestErrorCheck()
