"""`output` and `grad` on a case, whatever made it: the dispatch between an OpTest's own
methods and the case's expected values.

When the case came from an OpTest class (`context.test`), its own `test_*` methods run once
and their results are split into `output` and `grad` (harness.optest_methods). A case
without an OpTest (made by hand or by --fuzz) is checked directly with the case's expected
outputs (and, when it names gradients, numeric gradients), through
`harness.output_judge.check_case` / `harness.grad_judge.check_case`.

`run_optest_methods` and `record_optest_arguments` live in harness.optest_methods
(which imports no check) and are re-exported here.
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
