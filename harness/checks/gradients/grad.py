"""`grad`: analytic gradients against numeric ones: the OpTest's own check_grad calls
(harness.optest.methods) or, for a case without an OpTest, the case's named gradients
(harness.judging.grad_judge)."""
from __future__ import annotations

from harness.checks.base import Check, WrongValue
from harness.judging.grad_judge import check_case


class GradCheck(Check):
    name = "grad"
    description = "analytic gradients against numeric ones"
    order = 20

    def verdict(self, derived, context):
        if context.test is None:
            return self.adopt(derived, check_case(derived.case, context), WrongValue)
        from harness.optest.methods import results_from_test

        return self.adopt(derived, results_from_test(derived.case, context, "grad"), WrongValue)


CHECK = GradCheck()
