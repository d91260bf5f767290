"""`output` and `grad` as registered checks: the bridge to OpTest.

When the case came from an OpTest class, its own `test_*` methods run once (inside
`harness.report.collecting()`), so the test author's tolerances and arguments apply; their
CheckResults are split into `output` and `grad`. A `test_*` method that raises outside a
check_* call is a failed result (check `grad` when its name says grad, else `output`).

A case without an OpTest (made by hand or by --fuzz) is checked directly with the case's
expected outputs (and, when it names gradients, numeric gradients), through
`harness.checks.output.check_case` / `harness.checks.grad.check_case`.

Every test_* method runs on a fresh instance with its own setUp (no state leaks from one
method to the next), like unittest does.
"""
from __future__ import annotations

import unittest

from harness.checks._support import CheckContext
from harness.report import FAIL, SKIP, CheckResult, collecting

__all__ = ["check_output", "check_grad", "run_optest_methods"]


def run_optest_methods(test, case_name: str, seed: int | None = None) -> list[CheckResult]:
    """Run every test_* method of an OpTest instance, collecting its CheckResults. The first
    runs on `test`; each other on a fresh instance after its own setUp (seeded with `seed`
    when given, so its data is the first one's)."""
    results: list[CheckResult] = []
    names = sorted(n for n in dir(type(test)) if n.startswith("test") and
                   callable(getattr(type(test), n, None)))
    for k, method in enumerate(names):
        with collecting() as collected:
            try:
                target = test
                if k > 0:   # a fresh instance and setUp per method, like unittest
                    target = type(test)(method) if _takes_method(type(test)) else type(test)()
                    if seed is not None:
                        from harness.discovery import seed_all

                        seed_all(seed)
                    target.setUp()
                getattr(target, method)()
                _merge_records(test, target)
                error = None
            except unittest.SkipTest as exc:
                error = ("skip", str(exc))
            except Exception as exc:  # noqa: BLE001 - reported as a failed check
                error = ("fail", f"{type(test).__name__}.{method} raised "
                                 f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        for r in collected:
            if not r.case:
                r.case = case_name
        results.extend(collected)
        if error is not None:
            check = "grad" if "grad" in method else "output"
            results.append(CheckResult(check, FAIL if error[0] == "fail" else SKIP, "", "",
                                       case_name, error[1]))
    return results


def record_optest_arguments(test, case_name: str, seed: int | None = None) -> None:
    """What the OpTest's methods would check (check_grad's inputs, outputs, options) is
    recorded on `test` and its Case; nothing runs (harness.op_test.record_only)."""
    from harness.op_test import record_only

    try:
        with record_only():
            run_optest_methods(test, case_name, seed)
    except Exception:  # noqa: BLE001 - a broken method is the output check's to report
        pass


def _takes_method(cls) -> bool:
    return issubclass(cls, unittest.TestCase)


def _merge_records(into, source) -> None:
    """What a fresh instance recorded (its check_* calls) goes onto the first instance,
    whose Case the other checks use."""
    if into is source:
        return
    rec = getattr(source, "_opkit_recorded", None)
    record = getattr(into, "_record", None)
    if rec and callable(record):
        record(**rec)


def _from_test(case, context: CheckContext, check: str):
    cache = context.cache
    if "optest" not in cache:
        cache["optest"] = run_optest_methods(context.test, case.name)
    got = [r for r in cache["optest"] if r.check == check]
    if not got:
        what = "check_output()" if check == "output" else "check_grad()"
        return [CheckResult(check, SKIP, "", "", case.name,
                            f"{type(context.test).__name__} never calls {what}")]
    return got


def check_output(case, context: CheckContext) -> list:
    if context.test is not None:
        return _from_test(case, context, "output")
    from harness.checks.output import check_case

    return check_case(case, context)


def check_grad(case, context: CheckContext) -> list:
    if context.test is not None:
        return _from_test(case, context, "grad")
    from harness.checks.grad import check_case

    return check_case(case, context)
