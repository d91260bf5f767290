"""`grad_outputs`: gradients with random cotangents on EVERY differentiable output, and no
gradient dropped by the grad maker (docs/harness.md, "`grad_outputs`")."""
from __future__ import annotations

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import normalize_slots
from harness.checks.base import Check, WrongValue
from harness.judging.grad_judge import case_grads, numeric_dtype
from harness.judging.numeric_gradient import NumericEngine
from harness.backend.seam import Combo, consumed_outputs, make_cotangents
from harness.judging.output_judge import expected_outputs, first_line, prepare_case
from harness.reporting.report import SKIP
from harness.judging.second_order import judge_exact, judge_fast

NAME = "grad_outputs"


def _named(case) -> list[str]:
    if case.grad_outputs:
        return list(case.grad_outputs)
    proto = backends.proto(case.op_type)
    return [v.name for v in proto.outputs if not v.duplicable and not v.intermediate] \
        if proto is not None else []


def _unnamed_and_dropped(case, prepared, outs) -> tuple[list, list]:
    """The float outputs whose gradient the grad maker consumes and the case does not name;
    those it takes no gradient of, other than intermediate ones, state updates (an output
    declared inplace with an input: batch_norm's MeanOut) and the test's own output names
    (which the grad check covers)."""
    proto, named = backends.proto(case.op_type), set(_named(case))
    floats = [n for n, v in outs.items() if v is not None and v.dtype.kind == "f" and v.size]
    consumed = consumed_outputs(prepared, tuple(case.no_grad_set or ()))
    skip = {v.name for v in proto.outputs if v.intermediate} if proto is not None else set()
    skip |= set(backends.describe(case.op_type).writes) | named
    return ([n for n in consumed if n not in named and n in floats],
            [n for n in floats if n not in consumed and n not in skip])


class GradOutputsCheck(Check):
    name = NAME
    description = ("gradients with random cotangents on every float output the grad maker "
                   "consumes, not only the test's output_names")
    order = 21
    needs = ("grad_ops",)
    needs_float = True

    def applies(self, case, context):
        if not case.grad_inputs:
            return "the case names no gradients"
        if not backends.declared().has_grad(case.op_type):
            return "the op registers no grad maker"
        if (case.options or {}).get("user_defined_grads") is not None:
            return "the test gives user_defined_grads (tied to the outputs it names)"
        return None

    def verdict(self, derived, context):
        case = derived.case
        dtype = numeric_dtype(case)
        if dtype is None:
            return [self.skipped(case, "the op has no float CPU kernel")]
        try:
            fwd = prepare_case(case, "CPU", dtype, normalize_slots(expected_outputs(case)))
            outs = fwd.forward()
            extra, dropped = _unnamed_and_dropped(case, fwd, outs)
        except Exception as exc:  # noqa: BLE001 - the output and grad checks report it
            return [self.skipped(case, f"the forward or grad maker raised {first_line(exc)}")]
        named = [n for n in _named(case) if outs.get(n) is not None]
        head = [self._dropped(derived, dropped, context)] if dropped else []
        if not extra:
            return head or [self.skipped(case, f"the test's output_names ("
                                               f"{', '.join(named) or 'none'}) are every float "
                                               "output the grad maker consumes")]
        results = case_grads(case, outputs=named + extra, seed=context.seed,
                             places=getattr(context, "places", None),
                             dtypes=getattr(context, "dtypes", None),
                             mode=(case.options or {}).get("grad_mode"),
                             repro=self.reproduce(case))
        note = (f"cotangents also on {', '.join(extra)} (the test names "
                f"{', '.join(named) or 'none'})")
        for r in results:
            r.check = NAME
            if r.status == SKIP:
                continue
            r.message = f"{note}: {r.message}" if r.message else note
        return head + results

    def _dropped(self, derived, dropped, context):
        """Outputs the grad maker takes no gradient of must not depend on the differentiated
        inputs: the numeric gradient of sum(cot * output) is zero (float64, CPU)."""
        case, seed = derived.case, context.seed
        try:
            p = prepare_case(case, "CPU", "float64", normalize_slots(expected_outputs(case)))
            outs = p.forward()
            engine = NumericEngine(p, make_cotangents(outs, dropped, seed=seed),
                                   float((case.options or {}).get("numeric_grad_delta", 0.005)),
                                   seed=seed)
            problems = []
            for name in case.grad_inputs:
                if name not in engine.base:
                    continue
                zero = np.zeros(engine.base[name].shape)
                msg, _ = judge_exact(engine, name, zero)
                if msg is False:
                    msg, _ = judge_fast(engine, name, zero)
                if msg:
                    problems.append(msg)
        except Exception as exc:  # noqa: BLE001 - the grad check reports a raising op
            return self.skipped(case, f"numeric gradients of {', '.join(dropped)} raised "
                                      f"{first_line(exc)}")
        outs_text = ", ".join(dropped)
        if problems:
            grads = ", ".join(f"{n}@GRAD" for n in dropped)
            result = self.failed(derived, Combo("CPU", "float64"),
                                 f"output(s) {outs_text} depend on the differentiated inputs, "
                                 f"but the grad maker takes no {grads}: their gradient is "
                                 f"dropped (analytic 0): " + "; ".join(problems),
                                 kind=WrongValue)
            from opkit_fluid.checks.grad_declared import judge_dropped

            return judge_dropped(case, p, dropped, result)
        return self.passed(derived, Combo("CPU", "float64"), f"{outs_text}: no gradient taken, "
                           "and none is due (the numeric gradient is zero)")


CHECK = GradOutputsCheck()
