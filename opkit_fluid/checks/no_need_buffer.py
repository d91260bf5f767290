"""`no_need_buffer`: a grad kernel never reads the data of a variable its op declared
`no_need_buffer` (it gets a LoDTensor.meta_only, whose `.data` raises naming op and variable);
a pass's message hints at the grad op's inputs never touched but not declared so."""
from __future__ import annotations

from harness.reporting.error_text import first_line
from harness.checks.base import Check, UndeclaredRead
from harness.judging.compare import fmt_index
from harness.backend.context import Hooks, first_difference, has_grad, prepare, run_forward_backward
from harness.checks.modes import error_line
from harness.backend.seam import run as run_case
from opkit.framework.grad_maker import GRAD_SUFFIX
from opkit.framework.tensor import LoDTensor

NAME = "no_need_buffer"


class MetaOnlyHooks(Hooks):
    """Before each kernel of an op declaring no_need_buffer, swap the declared inputs for
    meta-only tensors; restore them after. Record which input slots each kernel read."""

    def __init__(self):
        super().__init__()
        self.saved = []
        self.swapped = []        # (op_type, slot, var)
        self.unread = {}         # op_type -> set of slots never read

    def before_kernel(self, op, ctx):
        self.saved = []
        for slot in op.info.no_need_buffer if op.info is not None else []:
            for name in op.input_list(slot):
                var = ctx.scope.find_var(name)
                value = var.value() if var is not None else None
                if not isinstance(value, LoDTensor) or value.buffer is None:
                    continue
                meta = LoDTensor.meta_only(
                    value.shape, value.dtype, value.lod, value.place,
                    reason=f"op '{op.type}' declared Input({slot}) no_need_buffer: variable "
                           f"'{name}' holds no data here (only shape, dtype and LoD)")
                self.saved.append((var, value))
                var.set_value(meta)
                self.swapped.append((op.type, slot, name))

    def after_kernel(self, op, ctx):
        self.restore()
        slots = {s for s, names in op.inputs.items() if names}
        declared = set(op.info.no_need_buffer) if op.info is not None else set()
        unread = slots - set(ctx.read_inputs) - declared
        # never read in any run of that op
        self.unread[op.type] = self.unread.get(op.type, unread) & unread

    def restore(self):
        for var, value in self.saved:
            var.set_value(value)
        self.saved = []


class NoNeedBufferCheck(Check):
    name = NAME
    description = "grad kernels never read the data of no_need_buffer variables"
    order = 80
    needs = ("kernel_hooks", "declarations")

    def applies(self, case, context):
        if not has_grad(case.op_type):
            return f"op '{case.op_type}' has no gradient"
        if not case.grad_inputs:
            return f"{case.name} checks no gradients (no check_grad)"
        return None

    def verdict(self, derived, context):
        case, seed = derived.case, context.seed

        def meta_only(combo):
            hooks = MetaOnlyHooks()
            try:
                return run_forward_backward(prepare(case, combo), case, hooks=hooks, seed=seed,
                                            fwd_hooks=Hooks()), hooks
            except Exception:
                hooks.restore()
                raise

        return self.compare_each(
            derived, context,
            base=lambda combo: run_case(case, combo, context),   # the shared plain run
            variant=meta_only, compare=_compare, passed_message=_note, base_fails="fail",
            raised_message=lambda exc, _: first_line(exc) + error_line(exc),
            raised_kind=UndeclaredRead)


def _compare(plain, run, combo):
    for name, value in plain.items():
        if not name.endswith(GRAD_SUFFIX):
            continue
        diff = first_difference(value, run[0].get(name))
        if diff is not None:
            return (f"{name} differs when the no_need_buffer inputs hold no data"
                    + (f" at {fmt_index(name, diff[0])}" if isinstance(diff, tuple)
                       else f": {diff}"), UndeclaredRead)
    return None


def _note(plain, run, combo) -> str:
    """A pass's message: the declarations honoured, and the hints (inputs never read)."""
    hooks = run[1]
    declared = sorted({f"{t}:{s}" for t, s, _ in hooks.swapped})
    hints = [f"op '{t}' never reads Input({s}): it could be declared no_need_buffer"
             for t, slots in sorted(hooks.unread.items()) for s in sorted(slots)]
    msg = ("data-less " + ", ".join(declared) + " ok") if declared else \
        "no no_need_buffer declarations"
    if hints:
        msg += "; hint: " + "; ".join(hints)
    return msg


CHECK = NoNeedBufferCheck()
