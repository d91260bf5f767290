"""`determinism`: several runs (at least 3) of forward and backward on the same inputs give
bitwise-identical outputs and gradients. A difference names the first differing element and
its distance in ULPs."""
from __future__ import annotations

from harness.checks.base import with_variants

from harness.checks._support import (CheckContext, combos, fail, first_difference, fmt_index,
                                     pass_, prepare, refeed, run_forward_backward)
from harness.report import SKIP, CheckResult
from harness.values import fmt_value

NAME = "determinism"


def check_case(case, context: CheckContext) -> list:
    from opkit.registry import op_info

    proto = op_info(case.op_type).proto
    if case.name.endswith("[default_attrs]") and proto is not None and \
            proto.attr("seed") is not None:
        return [CheckResult(NAME, SKIP, "", "", case.name, "a random op with its default "
                            "attrs (seed 0) draws a fresh seed each run")]
    runs = max(3, int(context.runs or 3))
    runnable, results = combos(case, context, NAME)
    for combo in runnable:
        try:
            prepared = prepare(case, combo)
            first = run_forward_backward(prepared, case, seed=context.seed)
            problem = None
            for k in range(1, runs):
                refeed(prepared, case, combo)
                again = run_forward_backward(prepared, case, seed=context.seed)
                for name in first:
                    diff = first_difference(first[name], again.get(name))
                    if diff is None:
                        continue
                    if isinstance(diff, str):
                        problem = (f"run {k + 1} of {runs}: {name}: {diff}", None)
                    else:
                        idx, a, b, ulps = diff
                        problem = (f"run {k + 1} of {runs} differs from run 1 at "
                                   f"{fmt_index(name, idx)}: {fmt_value(a)} vs {fmt_value(b)} ({ulps} ULP)",
                                   None)
                    break
                if problem:
                    break
        except Exception as exc:
            results.append(fail(NAME, combo, case, "the op raised before the check could "
                                f"finish: {str(exc).splitlines()[0]}"))
            continue
        if problem:
            results.append(fail(NAME, combo, case, problem[0], problem[1]))
        else:
            results.append(pass_(NAME, combo, case, f"{runs} runs bitwise identical"))
    return results


# the check runs on the case and on its all-default-attrs variant (harness.variants.basic)
check = with_variants(NAME, check_case, ("case", "default_attrs"))
