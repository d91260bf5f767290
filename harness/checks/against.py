"""`against`: opkit's own op and another backend's kernel (Paddle's) side by side, on the
test's case and explore's derived cases (docs/paddle.md, "--against paddle"). Outputs agree
within the dtype's output tolerance, gradients within GRAD_FACTOR times it; both sides
refusing agree."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness import options
from harness.backends import has_grad, has_op, unavailable
from harness.case import case_inputs, normalize_slots
from harness.check import Check, WrongValue
from harness.context import Combo, has_float_inputs
from harness.gradient import NumericEngine
from harness.inputs.explore import derive_cases
from harness.messages import raised
from harness.op import grad_outputs, grad_wrt, make_cotangents, op_refused, output_slots
from harness.op import make as make_op
from harness.op import place_object
from harness.tolerances import output_tolerance

GRAD_FACTOR = 10.0


def _run(case, dtype: str, backend: str, seed: int, cot=None):
    """({name: array} of outputs and 'X@GRAD' gradients, the cotangent used)."""
    p = make_op(case.op_type, case_inputs(case, dtype), case.attrs,
                output_slots(case, case.op_type), place_object("CPU"), backend=backend)
    outs = {n: (None if v is None else v.copy()) for n, v in p.forward().items()}
    result = dict(outs)
    wrt = grad_wrt(case, p) if case.grad_inputs else []
    if wrt and has_grad(case.op_type, backend=backend):
        if cot is None:
            cot = make_cotangents(outs, grad_outputs(case, outs), seed=seed)
        cot = {n: c.astype(outs[n].dtype) for n, c in cot.items() if outs.get(n) is not None}
        for n, g in p.backward(cot, wrt, tuple(case.no_grad_set or ())).items():
            result[n + "@GRAD"] = None if g is None else np.array(g)
    return result, cot


def _numeric(case, backend: str, cot: dict, name: str):
    p = make_op(case.op_type, case_inputs(case, "float64"), case.attrs,
                output_slots(case, case.op_type), place_object("CPU"), backend=backend)
    p.forward()
    engine = NumericEngine(p, {n: np.asarray(c, np.float64) for n, c in cot.items()},
                           float(case.options.get("numeric_grad_delta") or 1e-3))
    return engine.exact(name)


def _first_diff(a, b, atol, rtol):
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a64.shape != b64.shape:
        return ("shape", a64.shape, b64.shape)
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(a64 - b64) <= atol + rtol * np.abs(b64))
        bad &= ~(np.isnan(a64) & np.isnan(b64))
        bad &= ~(np.isinf(a64) & (a64 == b64))
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.unravel_index(int(np.flatnonzero(bad)[0]), a64.shape)) \
        if a64.ndim else ()
    return (idx, a64[idx], b64[idx])


class AgainstCheck(Check):
    name = "against"
    description = "opkit's op and another backend's kernel agree on every case (--against NAME)"
    order = 300
    default = False

    def applies(self, case, context):
        other = options.current().against
        if not other:
            return "no --against backend given"
        why = unavailable(other)
        if why:
            return why
        if not has_op(case.op_type, other):
            return f"backend {other!r} has no op '{case.op_type}'"
        return None

    def verdict(self, derived, context):
        other = options.current().against
        case = derived.case
        seed = derived.seed if derived.seed is not None else context.seed
        cases = [("the test's case", case, True)]
        ref = case.reference
        if ref is not None:
            for ex in derive_cases(case, seed=seed):
                try:
                    with np.errstate(all="ignore"):
                        expected = ref(dict(ex.inputs), dict(ex.attrs))
                except Exception:  # noqa: BLE001 - the reference does not take it
                    continue
                cases.append((f"derived: {ex.note}", replace(
                    case, inputs=ex.inputs, attrs=ex.attrs, outputs=expected,
                    name=f"{case.name}[explore]"), False))
        dtypes = [d for d in context.selected_dtypes() if d in ("float32", "float64")] \
            if has_float_inputs(case) else [""]
        for dtype in dtypes:
            combo = Combo("CPU", dtype)
            problem, judged, skipped = None, 0, []
            for label, c, own in cases:
                found = self._one(c, dtype, other, seed, label, own, skipped)
                if found == "skip":     # refused by one side only: not judged
                    continue
                judged += 1
                if found:
                    problem = found
                    break
            if problem:
                yield self.failed(derived, combo, problem, kind=WrongValue)
            else:
                yield self.passed(derived, combo, f"{judged} case(s) agree with {other}" +
                                  (f"; {len(skipped)} derived case(s) refused by one side "
                                   f"only (e.g. {skipped[0]})" if skipped else ""))

    def _one(self, c, dtype, other, seed, label, own, skipped):
        errs, runs, cot = {}, {}, None
        for side in ("opkit", other):
            try:
                runs[side], cot_used = _run(c, dtype, side, seed, cot)
                cot = cot if cot is not None else cot_used
            except Exception as exc:  # noqa: BLE001 - refusals compared below
                errs[side] = exc
        if len(errs) == 2:
            return None                                  # both refuse: they agree
        if errs:
            side, exc = next(iter(errs.items()))
            what = "refuses" if op_refused(exc) else "raises"
            text = (f"{label}: {side} {what} ({raised(exc)[:200]}) where "
                    f"{other if side == 'opkit' else 'opkit'} computes")
            if not own and op_refused(exc):
                skipped.append(text)
                return "skip"
            return text
        a, b = runs["opkit"], runs[other]
        atol, rtol = output_tolerance(dtype or "float64")    # dtype: "", float32 or float64
        for name in a:
            if a[name] is None or b.get(name) is None:
                continue
            if a[name].dtype.kind not in "fc" and b[name].dtype.kind not in "fc":
                tol = (0.0, 0.0)
            elif name.endswith("@GRAD"):
                tol = (atol * GRAD_FACTOR, rtol * GRAD_FACTOR)
            else:
                tol = (atol, rtol)
            d = _first_diff(a[name], b[name], *tol)
            if d is None:
                continue
            if d[0] == "shape":
                return f"{label}: {name}: opkit's shape {list(d[1])}, {other}'s {list(d[2])}"
            idx, va, vb = d
            where = f"{name}[{', '.join(map(str, idx))}]" if idx else name
            return (f"{label}: {where}: opkit {va:.7g}, {other} {vb:.7g}; "
                    + self._oracle(c, name, idx, va, vb, other, cot))
        return None

    def _oracle(self, c, name, idx, va, vb, other, cot) -> str:
        """Which side the independent oracle supports, in words."""
        try:
            if name.endswith("@GRAD"):
                var = name[: -len("@GRAD")]
                na = float(_numeric(c, "opkit", cot, var)[idx])
                nb = float(_numeric(c, other, cot, var)[idx])
                return (f"numeric derivative (float64) {na:.7g} from opkit's forward, "
                        f"{nb:.7g} from {other}'s: "
                        + _side(va, vb, (na + nb) / 2 if abs(na - nb) <= 1e-3 *
                                (1 + abs(na)) else None, other))
            want = {s.name: np.asarray(s.data) for ss in normalize_slots(c.outputs).values()
                    for s in ss}
            if name in want and want[name].shape == np.shape(want[name]):
                ref = float(np.asarray(want[name], np.float64)[idx])
                return f"expected output {ref:.7g}: " + _side(va, vb, ref, other)
        except Exception as exc:  # noqa: BLE001 - the oracle itself failing is a note
            return f"no oracle ({type(exc).__name__}: {str(exc)[:80]})"
        return "no independent oracle for this output"


def _side(va, vb, ref, other) -> str:
    if ref is None:
        return "the oracles disagree with each other"
    if np.isnan(ref) or np.isnan(va) or np.isnan(vb):
        na, nb = bool(np.isnan(va)) == bool(np.isnan(ref)), \
            bool(np.isnan(vb)) == bool(np.isnan(ref))
        return ("supports opkit" if na and not nb else f"supports {other}" if nb and not na
                else "supports neither")
    da, db = abs(va - ref), abs(vb - ref)
    if da < db:
        return "supports opkit"
    if db < da:
        return f"supports {other}"
    return "supports both equally"


CHECK = AgainstCheck()
