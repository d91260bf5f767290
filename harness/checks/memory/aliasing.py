"""`aliasing`: after each kernel (forward and grad), no output shares memory with an input
unless the op declared that pair `inplace`."""
from __future__ import annotations

from harness.reporting.error_text import first_line
from harness.checks.base import AliasedOutput, Check
from harness.judging.compare import shares_memory
from harness.backend.context import Hooks, combos, fail, pass_, prepare, run_forward_backward

NAME = "aliasing"


class AliasHooks(Hooks):
    def __init__(self):
        super().__init__()
        self.found = []   # (op_type, in_slot, in_var, out_slot, out_var)

    def after_kernel(self, op, ctx):
        declared = set(op.info.inplace.items()) if op.info is not None else set()

        def data(name):
            var = ctx.scope.find_var(name)
            return getattr(var.value(), "_data", None) if var else None

        for out_slot, out_names in op.outputs.items():
            for out_name in (n for n in out_names if n in ctx.written):
                for in_slot, in_names in op.inputs.items():
                    for in_name in in_names:
                        if (in_slot, out_slot) not in declared and in_name != out_name and \
                                shares_memory(data(out_name), data(in_name)):
                            self.found.append((op.type, in_slot, in_name, out_slot, out_name))


class AliasingCheck(Check):
    name = NAME
    description = "no output shares memory with an input unless declared inplace"
    order = 50
    needs = ("kernel_hooks",)
    variants = ("case", "default_attrs")   # the case and its all-default-attrs variant

    def verdict(self, derived, context):
        case = derived.case
        runnable, results = combos(case, context, NAME)
        for combo in runnable:
            hooks = AliasHooks()
            try:
                run_forward_backward(prepare(case, combo), case, hooks=hooks, seed=context.seed)
            except Exception as exc:
                results.append(fail(NAME, combo, case, "the op raised before the check could "
                                    f"finish: {first_line(exc)}", kind="kernel-raised"))
                continue
            if hooks.found:
                msgs = [f"op '{t}': Output({os_}) variable '{on}' shares memory with "
                        f"Input({is_}) variable '{in_}' (declare inplace={{'{is_}': '{os_}'}} "
                        "or copy)" for t, is_, in_, os_, on in dict.fromkeys(hooks.found)]
                results.append(fail(NAME, combo, case, "; ".join(msgs)))
            else:
                results.append(pass_(NAME, combo, case))
        return self.adopt(derived, results, AliasedOutput)


CHECK = AliasingCheck()
