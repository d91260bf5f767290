"""`against`: opkit's own op and another backend's kernel (Paddle's) side by side, on the
test's case and explore's derived cases (docs/paddle.md, "--against paddle"). Outputs agree
within the dtype's output tolerance, gradients within GRAD_FACTOR times it; both sides
refusing agree."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness import options
from harness.backend.dispatch import has_grad, has_op, unavailable
from harness.backend.case import case_inputs, has_float_inputs, normalize_slots
from harness.checks.base import Check, WrongValue
from harness.judging.compare import first_wrong, fmt_index
from harness.judging.numeric_gradient import NumericEngine
from harness.inputs.explore import derive_cases
from harness.reporting.messages import raised
from harness.backend.seam import (Combo, grad_outputs, make as make_op, make_cotangents, op_refused,
                        output_slots, place_object)
from harness.judging.tolerances import output_tolerance

GRAD_FACTOR = 10.0


def _run(case, dtype: str, backend: str, seed: int, cot=None):
    """({name: array} of outputs and 'X@GRAD' gradients, the cotangent used)."""
    p = make_op(case.op_type, case_inputs(case, dtype), case.attrs,
                output_slots(case, case.op_type), place_object("CPU"), backend=backend)
    outs = {n: (None if v is None else v.copy()) for n, v in p.forward().items()}
    wrt = list(case.grad_inputs or ())
    if wrt and has_grad(case.op_type, backend=backend):
        if cot is None:
            cot = make_cotangents(outs, grad_outputs(case, outs), seed=seed)
        cot = {n: c.astype(outs[n].dtype) for n, c in cot.items() if outs.get(n) is not None}
        for n, g in p.backward(cot, wrt, tuple(case.no_grad_set or ())).items():
            outs[n + "@GRAD"] = None if g is None else np.array(g)
    return outs, cot


def _numeric(case, backend: str, cot: dict, name: str):
    p = make_op(case.op_type, case_inputs(case, "float64"), case.attrs,
                output_slots(case, case.op_type), place_object("CPU"), backend=backend)
    p.forward()
    engine = NumericEngine(p, {n: np.asarray(c, np.float64) for n, c in cot.items()},
                           float(case.options.get("numeric_grad_delta") or 1e-3))
    return engine.exact(name)


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
            elif not judged:
                yield self.skipped(case, f"no case to compare: {skipped[0]}")
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
            if getattr(exc, "no_equivalent", False):   # a case the other side cannot say
                skipped.append(text)
                return "skip"
            if not own and op_refused(exc):
                skipped.append(text)
                return "skip"
            return text
        a, b = runs["opkit"], runs[other]
        atol, rtol = output_tolerance(dtype or "float64")    # dtype: "", float32 or float64
        for name in a:
            x, y = a[name], b.get(name)
            if x is None or y is None:
                continue
            if np.shape(x) != np.shape(y):
                return (f"{label}: {name}: opkit's shape {list(np.shape(x))}, {other}'s "
                        f"{list(np.shape(y))}")
            exact = x.dtype.kind not in "fc" and y.dtype.kind not in "fc"
            factor = 0.0 if exact else GRAD_FACTOR if name.endswith("@GRAD") else 1.0
            d = first_wrong(x, y, atol * factor, rtol * factor)
            if d is None:
                continue
            idx, va, vb = d
            return (f"{label}: {fmt_index(name, idx)}: opkit {va:.7g}, {other} {vb:.7g}; "
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
            want = {s.name: s.data for ss in normalize_slots(c.outputs).values() for s in ss}
            if name in want:
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
