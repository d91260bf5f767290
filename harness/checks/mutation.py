"""`mutation`: no kernel (forward or grad) writes to any of its inputs: read-only views on
CPU, a content hash of every input on every place (docs/harness.md, "Checks")."""
from __future__ import annotations

from harness.check import Check, InputWritten
from harness.context import CheckContext, combos, fail, pass_
from harness.input_watch import (HashHooks, find_line, find_written_input, read_only_error,
                                 run_watched, where)
from opkit.registry import op_info

NAME = "mutation"


def check_case(case, context: CheckContext) -> list:
    runnable, results = combos(case, context, NAME)
    for combo in runnable:
        hooks = HashHooks()
        try:
            run_watched(case, combo, hooks, context)
        except Exception as exc:
            ro = read_only_error(exc)
            op_type = getattr(exc, "op_type", None) or case.op_type
            if ro is None:
                results.append(fail(NAME, combo, case, f"op '{op_type}' raised before the check "
                                    f"could finish: {str(exc).splitlines()[0]}",
                                    kind="kernel-raised"))
                continue
            written = find_written_input(case, combo, op_type, context)
            which = ", ".join(f"Input({s}) variable '{n}'" for s, n in written) or "an input"
            results.append(fail(NAME, combo, case, f"kernel of op '{op_type}' wrote to {which} "
                                f"(inputs are read-only){where(exc)}"))
            continue
        if hooks.changed:
            cpu = "CPU" in op_info(case.op_type).kernel_places()
            line = find_line(case, combo, context) if cpu else ""
            parts = [f"kernel of op '{t}' changed {what} of Input({s}) variable '{n}'"
                     for t, s, n, what in dict.fromkeys(hooks.changed)]
            results.append(fail(NAME, combo, case, "; ".join(parts) +
                                " (bypassing the read-only view)" + line))
        else:
            results.append(pass_(NAME, combo, case))
    return results


class MutationCheck(Check):
    name = NAME
    description = "no kernel wrote to any of its inputs"
    order = 40
    variants = ("case", "default_attrs")   # the case and its all-default-attrs variant

    def verdict(self, derived, context):
        return self.adopt(derived, check_case(derived.case, context), InputWritten)


CHECK = MutationCheck()
