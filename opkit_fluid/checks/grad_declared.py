"""Which outputs an op declares non-differentiable, read from what its author already wrote
(docs/harness.md, the `grad_outputs` row of the verdicts table): an output the grad maker
feeds to a grad op as a value is saved for the gradient (a pass); a grad kernel that reads
its `Out@GRAD` (or `grad_var_name("Out")`), which the maker never provides, confirms the
failure; otherwise the failure is `unconfirmed`, settled by `.as_intermediate()` or an
inplace pair.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import replace

from harness.backend import dispatch as backends
from harness.judging.unconfirmed import unconfirm
from harness.reporting.report import PASS, CheckResult

__all__ = ["judge_dropped", "saved_outputs", "kernel_reads_gradient"]


def saved_outputs(prepared, no_grad_set=()) -> set[str]:
    """Forward outputs the grad ops take as values (not gradients)."""
    outs = set(prepared.output_names())
    return {n for op in prepared.grad_ops(tuple(no_grad_set)) for names in op.inputs.values()
            for n in names if n in outs}


def kernel_reads_gradient(grad_types, slot: str) -> bool:
    """Whether a kernel of one of the grad op types names `slot`'s gradient in its source."""
    pattern = re.compile(rf"""["']{re.escape(slot)}@GRAD["']|grad_var_name\(\s*["']"""
                         rf"""{re.escape(slot)}["']\s*\)""")
    for t in dict.fromkeys(grad_types):
        for entry in backends.declared().kernel_functions(t):
            try:
                source = inspect.getsource(entry.fn)
            except (OSError, TypeError):
                continue
            if pattern.search(source):
                return True
    return False


def _slot(prepared, name) -> str:
    slots = getattr(prepared, "output_slots", {})
    return next((slot for slot, names in slots.items() if name in names), name)


def judge_dropped(case, prepared, dropped, result):
    """The `grad_outputs` failure `result` about `dropped` outputs, judged against what the
    author declared (the module docstring)."""
    saved = saved_outputs(prepared, case.no_grad_set or ())
    undecided = [n for n in dropped if n not in saved]
    if not undecided:
        return CheckResult(result.check, PASS, result.place, result.dtype, result.case,
                           f"{', '.join(dropped)}: saved for the gradient (the grad maker "
                           "feeds them to the grad op), non-differentiable by declaration")
    try:
        types = [op.type for op in prepared.grad_ops(tuple(case.no_grad_set or ()))]
    except Exception:  # noqa: BLE001 - the grad check reports a failing grad maker
        types = []
    types = types or [case.op_type + "_grad"]
    read = [n for n in undecided if kernel_reads_gradient(types, _slot(prepared, n))]
    if read:
        head, _, rest = result.message.partition("\nreproduce:")
        return replace(result, message=f"{head} (confirmed: a grad kernel of the op reads "
                                       f"{', '.join(n + '@GRAD' for n in read)}, which the "
                                       "grad maker never gives it)"
                                       + (f"\nreproduce:{rest}" if rest else ""))
    inputs = set(case.inputs or {})
    slots = [_slot(prepared, n) for n in undecided]
    states = {slot[:-3]: slot for slot in slots if slot.endswith("Out") and slot[:-3] in inputs}
    if len(states) == len(slots):
        pairs = ", ".join(f'"{i}": "{o}"' for i, o in states.items())
        declaration = (f"declare them state updates of their inputs: inplace={{{pairs}}} in "
                       "register_operator (docs/harness.md, Verdicts)")
    else:
        declaration = ("declare them non-differentiable: "
                       + ", ".join(f'self.add_output("{slot}", ...).as_intermediate()'
                                   for slot in slots)
                       + " in the OpMaker (docs/harness.md, Verdicts)")
    return unconfirm(result, f"the harness inferred that {', '.join(undecided)} "
                             "should be differentiable; the grad maker takes no gradient of "
                             "it and no grad kernel reads one", declaration)
