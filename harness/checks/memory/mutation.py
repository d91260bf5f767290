"""`mutation`: no kernel (forward or grad) writes to any of its inputs: read-only views on
CPU, a content hash of every input on every place (docs/harness.md, "Checks")."""
from __future__ import annotations

from harness.backend.dispatch import kernel_places
from harness.reporting.error_text import first_line
from harness.checks.base import Check, InputWritten
from harness.backend.context import combos, fail, pass_
from harness.backend.input_watch import (HashHooks, find_line, find_written_input, read_only_error,
                                 run_watched, where)

NAME = "mutation"


class MutationCheck(Check):
    name = NAME
    description = "no kernel wrote to any of its inputs"
    order = 40
    needs = ("kernel_hooks",)
    variants = ("case", "default_attrs")   # the case and its all-default-attrs variant

    def verdict(self, derived, context):
        case = derived.case
        runnable, results = combos(case, context, NAME)
        for combo in runnable:
            hooks = HashHooks()
            try:
                run_watched(case, combo, hooks, context)
            except Exception as exc:
                op_type = getattr(exc, "op_type", None) or case.op_type
                if read_only_error(exc) is None:
                    results.append(fail(NAME, combo, case, f"op '{op_type}' raised before the "
                                        f"check could finish: {first_line(exc)}",
                                        kind="kernel-raised"))
                    continue
                written = find_written_input(case, combo, op_type, context)
                which = ", ".join(f"Input({s}) variable '{n}'" for s, n in written) or "an input"
                results.append(fail(NAME, combo, case, f"kernel of op '{op_type}' wrote to "
                                    f"{which} (inputs are read-only){where(exc)}"))
                continue
            if hooks.changed:
                cpu = "CPU" in kernel_places(case.op_type)
                line = find_line(case, combo, context) if cpu else ""
                parts = [f"kernel of op '{t}' changed {what} of Input({s}) variable '{n}'"
                         for t, s, n, what in dict.fromkeys(hooks.changed)]
                results.append(fail(NAME, combo, case, "; ".join(parts) +
                                    " (bypassing the read-only view)" + line))
            else:
                results.append(pass_(NAME, combo, case))
        return self.adopt(derived, results, InputWritten)


CHECK = MutationCheck()
