"""`output`: forward outputs (and output LoD) against the expected ones, per place x dtype,
judged by the one output judge (harness.judging.output_judge): each check_output call an
OpTest's own test_* methods declare, with the author's tolerances
(harness.optest.methods), or, for a case without an OpTest, the case's expected outputs."""
from __future__ import annotations

from harness.checks.base import Check, WrongValue
from harness.judging.output_judge import check_case
from harness.optest.methods import judge_declared


class OutputCheck(Check):
    name = "output"
    description = "forward outputs (and output LoD) against the expected ones"
    order = 10

    def verdict(self, derived, context):
        if context.test is None:
            return self.adopt(derived, check_case(derived.case, context), WrongValue)
        return self.adopt(derived, judge_declared(derived.case, context, self.name), WrongValue)


CHECK = OutputCheck()
