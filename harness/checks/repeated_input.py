"""`repeated_input`: one variable passed to two input slots, or twice in a duplicable slot,
gives the outputs of distinct copies and the summed gradient.

Bug class: kernels that write an output in place over what they think is a private input
(`x += y` when X and Y are one buffer), grad kernels that set rather than accumulate the
gradient of a variable read twice, grad makers whose duplicate gradient names are not summed.
The comparison is against a run with two distinct variables holding the same values; the
gradient of the shared variable must equal the sum of the two distinct gradients.
"""
from __future__ import annotations

import numpy as np

from harness.checks.base import Check, KernelRaised, Mismatch
from harness.compare import compare
from opkit.framework.grad_maker import grad_var_name


class RepeatedInputCheck(Check):
    name = "repeated_input"
    description = "one variable in two slots gives distinct copies' outputs, summed gradients"
    order = 160
    variants = ("repeated_input",)
    needs_float = True

    def verdict(self, derived, context):
        from harness.pipeline import opkit_refusal, raised

        results = []
        runnable, _ = self.plan(derived, context, results)
        for combo in runnable:
            try:
                distinct = _run(derived, combo, context, shared=False)
            except Exception:  # noqa: BLE001 - the case itself failing is `output`'s business
                results.append(self.skipped(derived.base, "the case itself raises", combo))
                continue
            try:
                shared = _run(derived, combo, context, shared=True)
            except Exception as exc:  # noqa: BLE001
                if opkit_refusal(exc):
                    results.append(self.passed(derived, combo, f"refused: "
                                               f"{opkit_refusal(exc)[:100]}"))
                else:
                    results.append(self.failed(derived, combo, f"the op raised {raised(exc)}",
                                               kind=KernelRaised))
                continue
            problem = None
            for name, want in distinct.items():
                got = shared.get(name)
                if want is None or got is None or np.asarray(want).dtype.kind != "f":
                    continue
                msg, _ = compare(name, got, want, combo.dtype, None, None, True)
                if msg:
                    problem = msg.replace("expected", "distinct copies gave")
                    break
            if problem:
                results.append(self.failed(derived, combo, problem, kind=Mismatch))
            else:
                results.append(self.passed(derived, combo))
        return results


def _run(derived, combo, context, shared: bool) -> dict:
    """Outputs and the gradient of the first aliased variable (summed over both places when
    `shared` is False: what the shared variable's gradient must equal)."""
    from harness.checks._support import (
        case_inputs,
        grad_outputs,
        has_grad,
        output_slots,
        place_object,
    )
    from harness.runner import PreparedOp, VarSpec, make_cotangents

    case = derived.case
    sa, ia, sb, ib = derived.info["alias"]
    specs = case_inputs(case, combo.dtype)
    first = specs[sa][ia]
    second = specs[sb][ib]
    copy = first.data.copy()
    if shared:
        specs[sb][ib] = VarSpec(first.name, first.data, first.lengths)
    else:
        name = second.name if second.name != first.name else second.name + "@copy"
        specs[sb][ib] = VarSpec(name, copy, first.lengths)
    prepared = PreparedOp(case.op_type, specs, case.attrs, output_slots(case, case.op_type),
                          place_object(combo.place))
    outs = prepared.forward()
    result = {n: (None if v is None else v.copy()) for n, v in outs.items()}
    if case.grad_inputs and has_grad(case.op_type) and first.name not in (case.no_grad_set or ()):
        cot = make_cotangents(outs, grad_outputs(case, outs), seed=getattr(context, "seed", 2024))
        cot = {n: c.astype(outs[n].dtype) for n, c in cot.items()}
        wrt = [first.name] if shared else [first.name, specs[sb][ib].name]
        grads = prepared.backward(cot, wrt, tuple(case.no_grad_set or ()))
        g = [grads.get(n) for n in wrt]
        if all(x is not None for x in g):
            total = g[0].astype(np.float64) if shared else \
                g[0].astype(np.float64) + g[1].astype(np.float64)
            result[grad_var_name(first.name)] = total.astype(g[0].dtype)
    return result


CHECK = RepeatedInputCheck()
