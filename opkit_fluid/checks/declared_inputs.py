"""`declared_inputs`: every kernel run in a scope holding only its op's declared variables
(the forward op's no_need_buffer inputs as shape-only placeholders) gives bitwise the plain
run's results. docs/harness.md, "Execution-mode checks". (A grad op's no_need_buffer inputs
keep their data here: the `no_need_buffer` check swaps them.)"""
from __future__ import annotations

from harness.checks.base import Check, Mismatch
from harness.backend.context import Hooks, grad_op_types, prepare, run_forward_backward
from harness.checks.modes import error_line, first_line, kernel_line, producer, steady_difference
from harness.backend.seam import run as run_case
from opkit.framework.scope import Scope
from opkit.framework.tensor import LoDTensor

MODE = "in a scope holding only its declared inputs"


class UndeclaredRead(LookupError):
    """A kernel looked up a variable its op does not declare."""


class DeclaredScope(Scope):
    """A scope that holds only `allowed` names; looking up any other name raises."""

    def __init__(self, op, allowed):
        super().__init__()
        self._op, self._allowed = op, allowed

    def find_var(self, name):
        if name not in self._allowed:
            raise UndeclaredRead(
                f"the kernel of op '{self._op.type}' looked up variable '{name}' in the scope, "
                "but the op does not declare it as an input (the grad maker must pass it, e.g. "
                "op.set_input(...)): a framework that frees undeclared variables has none")
        return self._vars.get(name)


class DeclaredHooks(Hooks):
    """Before each kernel, swap its context's scope for a DeclaredScope holding the op's
    declared variables (the forward op's no_need_buffer inputs data-less); after it, copy the
    outputs back into the real scope."""

    def __init__(self, forward_type: str):
        super().__init__()
        self.forward_type = forward_type
        self.real = None
        self.swapped = []        # (op type, slot, var) made data-less

    def before_kernel(self, op, ctx):
        real = ctx.scope
        ins, outs = op.input_arg_names(), op.output_arg_names()
        scope = DeclaredScope(op, set(ins) | set(outs))
        nnb = set(op.info.no_need_buffer) if op.type == self.forward_type and op.info else set()
        for slot, names in op.inputs.items():
            for name in names:
                var = real.find_var(name)
                if var is None:
                    continue
                value = var.value()
                if slot in nnb and isinstance(value, LoDTensor) and value.buffer is not None:
                    value = LoDTensor.meta_only(
                        value.shape, value.dtype, value.lod, value.place,
                        reason=f"op '{op.type}' declared Input({slot}) no_need_buffer: "
                               f"'{name}' is a shape-only placeholder here")
                    self.swapped.append((op.type, slot, name))
                scope.var(name).set_value(value)
        for name in outs:
            var = real.find_var(name)
            if var is not None and name not in scope._vars:
                scope.var(name).set_value(var.value())
        self.real = real
        ctx.scope = scope

    def after_kernel(self, op, ctx):
        scope, real = ctx.scope, self.real
        for name in op.output_arg_names():
            var = scope._vars.get(name)
            if var is not None and var.value() is not None:
                real.var(name).set_value(var.value())
        ctx.scope = real


class DeclaredInputsCheck(Check):
    name = "declared_inputs"
    description = ("each kernel run in a scope holding only its op's declared variables (the "
                   "forward's no_need_buffer inputs shape-only) gives the same results")
    order = 85
    needs = ("kernel_hooks",)

    def verdict(self, derived, context):
        case = derived.case
        seed = context.seed

        def plain(combo):       # run again: not the shared plain run
            return run_forward_backward(prepare(case, combo), case, seed=seed)

        def declared_only(combo):
            hooks = DeclaredHooks(case.op_type)
            return run_forward_backward(prepare(case, combo), case, hooks=hooks,
                                        seed=seed), hooks

        def judge(want, run, combo):
            found = steady_difference(want, run[0], "plain run", "declared-only run",
                                      lambda: plain(combo))
            if found and found[0] is None:
                return [self.skipped(derived.base, found[1], combo)]
            if found:
                var, text = found
                where = kernel_line(producer(var, case.op_type, grad_op_types(case)),
                                    combo.dtype, combo.place)
                return f"{MODE}: {text} -- {where}", Mismatch
            return None

        def note(want, run, combo):
            swapped = sorted({f"{t}:{s}" for t, s, _ in run[1].swapped})
            return ("shape-only " + ", ".join(swapped)) if swapped else ""

        return self.compare_each(derived, context,
                                 base=lambda combo: run_case(case, combo, context),
                                 variant=declared_only,
                                 compare=judge, passed_message=note,
                                 base_skip="the case itself raises",
                                 raised_message=lambda exc, _: self._raised(exc))

    @staticmethod
    def _raised(exc) -> str:
        seen, e = [], exc
        while e is not None and e not in seen:        # the exception and its causes
            if isinstance(e, UndeclaredRead):
                return f"{MODE}: {e}{error_line(exc)}"
            seen.append(e)
            e = e.__cause__ or e.__context__
        return (f"forward with its no_need_buffer inputs as shape-only placeholders, each "
                f"kernel {MODE}: the op raised {first_line(exc)}{error_line(exc)}")


CHECK = DeclaredInputsCheck()
