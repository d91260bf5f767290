"""`inplace`: the op gives bitwise the same outputs AND gradients with in-place on as off,
also with one variable in two slots (docs/harness.md, "Execution-mode checks")."""
from __future__ import annotations

from dataclasses import replace

from harness.backend import dispatch as backends
from harness.backend.case import VarSpec, normalize_slots
from harness.checks.base import Check, Mismatch
from harness.judging.compare import shares_memory
from harness.backend.context import Hooks, case_inputs, grad_op_types, prepare, run_forward_backward
from harness.checks.modes import error_line, first_line, kernel_line, producer, steady_difference
from harness.backend.seam import run as run_case
from opkit.framework.grad_maker import GRAD_SUFFIX
from opkit.framework.tensor import LoDTensor

MODE = "in-place on"


class ReuseHooks(Hooks):
    """Which declared pairs really shared a buffer after the kernel; the input variables whose
    buffer an output took over (`consumed`: var name -> (op type, In, Out))."""

    def __init__(self):
        super().__init__()
        self.reused, self.own = set(), set()
        self.consumed = {}
        self.inputs = {}

    def before_kernel(self, op, ctx):
        self.inputs = {}
        for i, o in op.info.inplace.items():
            n = op.input(i)
            var = ctx.scope.find_var(n) if n else None
            self.inputs[(i, o)] = (n, getattr(var.value(), "_data", None) if var else None)

    def after_kernel(self, op, ctx):
        for (i, o), (n, data) in self.inputs.items():
            name = op.output(o)
            var = ctx.scope.find_var(name) if name else None
            out = getattr(var.value(), "_data", None) if var else None
            if shares_memory(out, data):
                self.reused.add(f"{op.type}:{i}->{o}")
                if n != name:
                    self.consumed[n] = (op.type, i, o)
            else:
                self.own.add(f"{op.type}:{i}->{o}")


class InplaceCheck(Check):
    name = "inplace"
    description = ("outputs and gradients bitwise equal with in-place on and off (forward and "
                   "backward), also with one variable in two slots")
    order = 90
    needs = ("executor_modes", "kernel_hooks", "declarations")
    variants = ("case", "repeated_input")

    def applies(self, case, context):
        decl = backends.declared()
        if any(decl.has_op(t) and decl.describe(t).writes
               for t in (case.op_type, *grad_op_types(case))):
            return None
        return f"op '{case.op_type}' declares no inplace pairs (nor do its grad ops)"

    def verdict(self, derived, context):
        case = derived.case
        grads = grad_op_types(case)
        seed = context.seed
        shared = derived.variant == "repeated_input"

        def plain(combo, fresh=False):
            """The run with in-place off (the case's is the plain run other checks share;
            `fresh`: run again, not shared)."""
            if shared:
                return _shared_run(derived, combo, seed, inplace=False)
            if fresh:
                return run_forward_backward(prepare(case, combo), case, seed=seed)
            return run_case(case, combo, context)

        def in_place(combo):
            hooks = ReuseHooks()
            if shared:
                return _shared_run(derived, combo, seed, inplace=True, hooks=hooks), hooks
            return run_forward_backward(prepare(case, combo, enable_inplace=True), case,
                                        hooks=hooks, seed=seed), hooks

        def judge(ref, run, combo):
            got, hooks = run
            found = steady_difference(ref, got, "in-place off", "in-place on",
                                      lambda: plain(combo, fresh=True))
            if found and found[0] is None:
                return [self.skipped(derived.base, found[1], combo)]
            if found:
                var, text = found
                where = self._where(derived, combo, var, hooks, seed, grads)
                return f"{MODE} (forward and backward): {text} -- {where}", Mismatch
            return None

        return self.compare_each(
            derived, context, base=plain, variant=in_place, compare=judge,
            passed_message=lambda ref, run, combo: _note(derived, run[1]),
            base_skip="the case itself raises",
            raised_message=lambda exc, _: (f"{MODE}: the op raised {first_line(exc)}"
                                           f"{error_line(exc)}"))

    def _where(self, derived, combo, var, hooks, seed, grads) -> str:
        """What read what: for a gradient after a forward that overwrote an input, the grad
        kernel's line that reads it; else the producing kernel."""
        case = derived.case
        if var.endswith(GRAD_SUFFIX) and hooks.consumed and derived.variant == "case":
            line = _read_after_overwrite(case, combo, seed, hooks.consumed)
            if line:
                return line
        kernel = kernel_line(producer(var, case.op_type, grads), combo.dtype, combo.place)
        if derived.variant == "repeated_input":
            return (f"{kernel} writes its output over one input slot before reading the other, "
                    "which holds the same variable")
        return f"{kernel} reads an element after the in-place output overwrote it"


def _note(derived, hooks) -> str:
    """A pass's note: which declared pairs reused their input's buffer, which did not."""
    how = []
    if hooks.reused:
        how.append("buffer reused: " + ", ".join(sorted(hooks.reused)))
    if hooks.own - hooks.reused:
        how.append("own buffer (set_output): " + ", ".join(sorted(hooks.own - hooks.reused)))
    note = "; ".join(how)
    if derived.variant != "case":
        note = f"variant '{derived.variant}' ({derived.note}): {note}"
    return note


def _read_after_overwrite(case, combo, seed, consumed) -> str:
    """Forward in place, then the backward with each overwritten input swapped for a data-less
    tensor: the grad kernel that reads one raises, pointing at its line."""
    prepared = prepare(case, combo, enable_inplace=True)
    prepared.forward()
    for name, (op_type, i, o) in consumed.items():
        var = prepared.scope.find_var(name)
        value = var.value() if var is not None else None
        if isinstance(value, LoDTensor) and value.buffer is not None:
            var.set_value(LoDTensor.meta_only(
                value.shape, value.dtype, value.lod, value.place,
                reason=f"'{name}' (Input({i}) of op '{op_type}') was overwritten in place by "
                       f"Output({o}): it holds the output's values now"))
    try:
        run_forward_backward(prepared, case, seed=seed, run_forward=False)
    except Exception as exc:  # noqa: BLE001 - the read we are looking for
        names = ", ".join(f"'{n}'" for n in consumed)
        return (f"a grad kernel reads {names}, which the forward overwrote in place (an "
                f"inplace declaration promises nothing after the op reads it){error_line(exc)}")
    return ""


def _shared_run(derived, combo, seed, inplace: bool, hooks=None) -> dict:
    """Outputs and gradients with the second aliased place fed the first one's variable."""
    case = derived.case
    sa, ia, sb, ib = derived.info["alias"]
    specs = case_inputs(case, combo.dtype)
    first = specs[sa][ia]
    specs[sb][ib] = VarSpec(first.name, first.data, first.lengths)
    prepared = prepare(case, combo, enable_inplace=inplace, inputs=specs)
    orig = normalize_slots(case.inputs)[sb][ib].name
    shared_case = replace(case, grad_inputs=list(dict.fromkeys(
        first.name if n == orig else n for n in case.grad_inputs or ())))
    return run_forward_backward(prepared, shared_case, hooks=hooks, seed=seed)


CHECK = InplaceCheck()

