"""`every_grad` (law 3 of issue 36): the float inputs the test's check_grad does not name
get their gradients checked (a numeric zero where the grad maker declares none), and leaving
a requested dispensable output unrequested changes no other output. docs/harness.md, "Laws
every op obeys".

Bug class: a wrong gradient of an input the test never checks (a bias, a scale, a weight);
a grad maker that forgets an input; a kernel whose path without an optional output (a mask,
indices, a saved statistic) computes the others differently.
"""
from __future__ import annotations

import numpy as np

from harness.backend import dispatch as backends
from harness.checks.laws import shared as laws
from harness.backend.case import normalize_slots
from harness.checks.base import Check, KernelRaised, Mismatch, WrongValue
from harness.judging.compare import compare
from harness.judging.grad_judge import case_grads, without_repro
from harness.judging.numeric_gradient import NumericEngine
from harness.reporting.messages import raised
from harness.backend.seam import has_grad, make_cotangents, refusal
from harness.reporting.report import FAIL
from opkit.framework.grad_maker import grad_var_name

NUMERIC_ZERO_ATOL = 1e-7      # |numeric dL/dx| at most this (plus 4x its error estimate)


class EveryGradCheck(Check):
    name = "every_grad"
    description = ("every float input's gradient (numeric zero where none is declared); "
                   "dispensable outputs left out change nothing")
    order = 41
    needs = ("grad_ops",)

    def verdict(self, derived, context):
        out = self._dispensable(derived) + self._inputs(derived, context)
        if not out:
            return [self.skipped(derived.case, "no float input outside the test's "
                                 "check_grad and no dispensable output requested")]
        return out

    # -- every float input -------------------------------------------------------------------
    def _inputs(self, derived, context):
        case = derived.case
        combo = laws.numeric_combo(case)
        if not has_grad(case.op_type) or combo.dtype != "float64":
            return []
        try:
            prepared, outs = laws.run(case, combo)
        except Exception:  # noqa: BLE001 - the case itself failing is `output`'s business
            return []
        skip = set(case.grad_inputs or ()) | set(case.no_grad_set or ())
        todo = [n for n in laws.float_inputs(prepared.inputs) if n not in skip]
        if not todo:
            return []
        out_names = [n for n in list(case.grad_outputs) or outs
                     if outs.get(n) is not None and outs[n].dtype.kind == "f"]
        if not out_names:
            return []
        try:
            ops = prepared.grad_ops(tuple(case.no_grad_set or ()))
        except Exception:  # noqa: BLE001 - no grad ops for this case: `grad` judges that
            return []
        produced = {n for op in ops for names in op.outputs.values() for n in names}
        declared = [n for n in todo if grad_var_name(n) in produced]
        reasons = _no_gradient_reasons(case)
        undeclared = [n for n in todo if n not in declared and n not in reasons]
        results = []
        if declared:
            why = _refuses_gradients(prepared, outs, declared, case)
            if why:
                return [self.skipped(case, f"the op refuses gradients for this case on "
                                     f"purpose: {why[:160]}", combo)]
            try:
                got = case_grads(case, declared, out_names,
                                 seed=getattr(context, "seed", None) or 0)
            except Exception as exc:  # noqa: BLE001
                return [self.failed(derived, combo, f"the gradient check of {declared} "
                                    f"raised {raised(exc)}", kind=KernelRaised)]
            bad = next((r for r in got if r.status == FAIL), None)
            if bad:
                results.append(self.failed(
                    derived, combo, f"gradients of {', '.join(declared)} (not in the test's "
                    f"check_grad): {without_repro(bad.message)}", kind=WrongValue))
            else:
                results.append(self.passed(derived, combo, f"{', '.join(declared)}: analytic "
                                           "== numeric"))
        if undeclared:
            try:      # a fresh op: the one above ran its grad ops
                fresh, outs = laws.run(case, combo)
            except Exception:  # noqa: BLE001
                return results
            cot = make_cotangents(outs, out_names, seed=getattr(context, "seed", 0) or 0)
            engine = NumericEngine(fresh, cot, 0.005, base_outputs=outs)
            for n in undeclared:
                try:
                    num = engine.exact(n)
                except Exception:  # noqa: BLE001 - no numeric gradient: nothing to show
                    continue
                err = engine.errors.get(n, np.zeros_like(num))
                bad = np.abs(num) > NUMERIC_ZERO_ATOL + 4 * np.abs(err)
                if bad.any():
                    bad &= _slope_is_stable(fresh, cot, outs, n, num)
                if bad.any():
                    k = int(np.flatnonzero(bad.reshape(-1))[0])
                    idx = np.unravel_index(k, num.shape) if num.ndim else ()
                    results.append(self.failed(
                        derived, combo, f"the op declares no gradient for input {n} (its "
                        f"grad maker gives no {grad_var_name(n)}), but {n} moves the "
                        f"outputs: numeric d(loss)/d{n}[{', '.join(map(str, idx))}] = "
                        f"{num.reshape(-1)[k]:.6g} ({int(bad.sum())} of {bad.size} elements "
                        f"non-zero; loss = sum(cotangent * {', '.join(out_names)}))",
                        kind=WrongValue))
                else:
                    results.append(self.passed(derived, combo, f"{n}: no gradient declared, "
                                               "numeric gradient zero"))
        return results

    # -- dispensable outputs -----------------------------------------------------------------
    def _dispensable(self, derived):
        case = derived.case
        proto = backends.proto(case.op_type)
        if proto is None or not case.outputs:
            return []
        optional = {v.name for v in proto.outputs if v.dispensable}
        expected = normalize_slots(case.outputs)
        asked = [s for s in expected if s in optional]
        if not asked or len(expected) < 2:
            return []
        combo = laws.numeric_combo(case)
        try:
            _, full = laws.run(case, combo, expected=expected)
        except Exception:  # noqa: BLE001
            return []
        results = []
        for slot in asked:
            fewer = {k: v for k, v in expected.items() if k != slot}
            try:
                _, got = laws.run(case, combo, expected=fewer)
            except Exception as exc:  # noqa: BLE001
                results.append(self.failed(derived, combo, f"with dispensable output {slot} "
                                           f"not requested the op raised {raised(exc)}",
                                           kind=KernelRaised))
                continue
            problem = _differs(full, got, [s.name for k, ss in fewer.items() for s in ss],
                               combo)
            if problem:
                results.append(self.failed(derived, combo, f"with dispensable output {slot} "
                                           f"not requested, {problem} (with it requested: "
                                           "expected)", kind=Mismatch))
            else:
                results.append(self.passed(derived, combo, f"{slot} left out: the other "
                                           "outputs unchanged"))
        return results


def _no_gradient_reasons(case) -> dict:
    """{variable name: reason} of the inputs whose slot declares `no_gradient(reason)`."""
    proto = backends.proto(case.op_type)
    slots = {v.name: getattr(v, "no_gradient_reason", "") for v in
             (proto.inputs if proto is not None else [])}
    return {s.name: slots[slot] for slot, ss in normalize_slots(case.inputs).items()
            for s in ss if slots.get(slot)}


def _refuses_gradients(prepared, outs, wrt, case) -> str | None:
    """The refusal message when the grad ops refuse this case on purpose (a typed opkit
    error: dropout or a MAX pool in inference mode), else None."""
    cot = make_cotangents(outs, [n for n, v in outs.items()
                                 if v is not None and v.dtype.kind == "f"])
    try:
        prepared.backward(cot, list(wrt), tuple(case.no_grad_set or ()))
    except Exception as exc:  # noqa: BLE001
        return refusal(exc)
    return None


def _differs(full: dict, got: dict, names, combo) -> str | None:
    for n in names:
        a, b = got.get(n), full.get(n)
        if b is None:
            continue
        if a is None:
            return f"output {n} was not produced"
        a, b = np.asarray(a), np.asarray(b)
        if b.dtype.kind != "f":
            if a.shape != b.shape or not np.array_equal(a, b):
                return f"output {n} differs (compared exactly)"
            continue
        msg, _ = compare(n, a, b, combo.dtype or b.dtype.name, None, None, True)
        if msg:
            return msg
    return None


CHECK = EveryGradCheck()


def _slope_is_stable(prepared, cot, outs, name, num):
    """Where the numeric derivative of `name` at a quarter of the step agrees with `num`
    (within 10%): a real slope. A jump (a mask compared with 0, a floor) moves the outputs by
    a step whose difference quotient grows as the step shrinks: not a gradient anyone could
    give, so not judged (issue 35: say so instead of failing)."""
    try:
        finer = NumericEngine(prepared, cot, 0.005 / 4, base_outputs=outs).exact(name)
    except Exception:  # noqa: BLE001 - no second estimate: keep the first verdict
        return np.ones(num.shape, dtype=bool)
    return np.abs(finer - num) <= 0.1 * np.maximum(np.abs(num), np.abs(finer))
