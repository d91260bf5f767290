"""`output`: forward outputs (and output LoD) against the expected ones, per place x dtype:
the OpTest's own test_* methods (their check_output calls, with the author's tolerances,
harness.optest.methods) or, for a case without an OpTest, the case's expected outputs
(harness.judging.output_judge)."""
from __future__ import annotations

from harness.checks.base import Check, WrongValue
from harness.judging.output_judge import check_case


class OutputCheck(Check):
    name = "output"
    description = "forward outputs (and output LoD) against the expected ones"
    order = 10

    def verdict(self, derived, context):
        if context.test is None:
            return self.adopt(derived, check_case(derived.case, context), WrongValue)
        from harness.optest.methods import results_from_test

        return self.adopt(derived, results_from_test(derived.case, context, "output"), WrongValue)


CHECK = OutputCheck()
