"""`output` and `grad` on a case, whatever made it: the OpTest's own methods when the case
came from one (`context.test`, harness.optest_methods), else the case's expected outputs
and numeric gradients (harness.output_judge / harness.grad_judge).
"""
from __future__ import annotations

from harness.context import CheckContext
from harness.optest_methods import (record_optest_arguments, results_from_test,
                                           run_optest_methods)

__all__ = ["check_output", "check_grad", "run_optest_methods", "record_optest_arguments"]


def check_output(case, context: CheckContext) -> list:
    if context.test is not None:
        return results_from_test(case, context, "output")
    from harness.output_judge import check_case

    return check_case(case, context)


def check_grad(case, context: CheckContext) -> list:
    if context.test is not None:
        return results_from_test(case, context, "grad")
    from harness.grad_judge import check_case

    return check_case(case, context)
