"""`grad`: analytic gradients against numeric ones, judged by the one gradient judge
(harness.judging.grad_judge): each check_grad call an OpTest's own test_* methods declare
(harness.optest.methods), or, for a case without an OpTest, the case's named gradients."""
from __future__ import annotations

from harness.checks.base import Check, WrongValue
from harness.judging.grad_judge import check_case
from harness.optest.methods import judge_declared


class GradCheck(Check):
    name = "grad"
    description = "analytic gradients against numeric ones"
    order = 20

    def verdict(self, derived, context):
        if context.test is None:
            return self.adopt(derived, check_case(derived.case, context), WrongValue)
        return self.adopt(derived, judge_declared(derived.case, context, self.name), WrongValue)


CHECK = GradCheck()
