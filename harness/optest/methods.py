"""Running an OpTest's own `test_*` methods inside `harness.reporting.report.collecting()`: what the
`output` and `grad` checks adopt (`results_from_test`); `check_output` / `check_grad` on
any case: those methods when the case came from an OpTest (`context.test`), else the
case's expected outputs and numeric gradients (harness.judging.output_judge / harness.judging.grad_judge).
Imports no check and nothing of harness.optest.op_test (which builds on it).
"""
from __future__ import annotations

import contextlib
import unittest

from harness.reporting.error_text import first_line
from harness.selecting.discovery import seed_all
from harness.reporting.report import FAIL, SKIP, CheckResult, collecting

__all__ = ["run_optest_methods", "record_optest_arguments", "results_from_test",
           "record_only", "recording_only", "check_output", "check_grad"]

_RECORD_ONLY = False


@contextlib.contextmanager
def record_only():
    """Within: check_output/check_grad only record what they would check (on the test and
    its Case) and return [] -- how the harness learns an OpTest's gradient inputs and
    options (e.g. for fuzzing) without running its checks again."""
    global _RECORD_ONLY
    before, _RECORD_ONLY = _RECORD_ONLY, True
    try:
        yield
    finally:
        _RECORD_ONLY = before


def recording_only() -> bool:
    """Whether check_* calls only record (inside `record_only()`)."""
    return _RECORD_ONLY


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
                skipped = getattr(getattr(type(test), method), "__unittest_skip__", False)
                if skipped:      # unittest neither sets up nor runs a skipped method
                    raise unittest.SkipTest(getattr(getattr(type(test), method),
                                                    "__unittest_skip_why__", "") or "skipped")
                target = test
                if k > 0:   # a fresh instance and setUp per method, like unittest
                    target = type(test)(method) if issubclass(type(test), unittest.TestCase) \
                        else type(test)()
                    if seed is not None:
                        seed_all(seed)
                    target.setUp()
                getattr(target, method)()
                _merge_records(test, target)
                error = None
            except unittest.SkipTest as exc:
                error = (SKIP, str(exc))
            except Exception as exc:  # noqa: BLE001 - reported as a failed check
                first = first_line(str(exc))
                error = (FAIL, f"{type(test).__name__}.{method} raised "
                               f"{type(exc).__name__}: {first}")
        for r in collected:
            if not r.case:
                r.case = case_name
        results.extend(collected)
        if error is not None:
            check = "grad" if "grad" in method else "output"
            results.append(CheckResult(check, error[0], "", "", case_name, error[1]))
    return results


def record_optest_arguments(test, case_name: str, seed: int | None = None) -> None:
    """What the OpTest's methods would check (check_grad's inputs, outputs, options) is
    recorded on `test` and its Case; nothing runs (`record_only`)."""
    try:
        with record_only():
            run_optest_methods(test, case_name, seed)
    except Exception:  # noqa: BLE001 - a broken method is the output check's to report
        pass


def _merge_records(into, source) -> None:
    """What a fresh instance recorded (its check_* calls) goes onto the first instance,
    whose Case the other checks use."""
    if into is source:
        return
    rec = getattr(source, "_opkit_recorded", None)
    record = getattr(into, "_record", None)
    if rec and callable(record):
        record(**rec)


def results_from_test(case, context, check: str) -> list[CheckResult]:
    """The `check` ("output" or "grad") results of `context.test`'s own methods (run once
    per context: `context.cache["optest"]`); a skip when the test never calls that check_*."""
    cache = context.cache
    if "optest" not in cache:
        cache["optest"] = run_optest_methods(context.test, case.name)
    got = [r for r in cache["optest"] if r.check == check]
    if not got:
        return [CheckResult(check, SKIP, "", "", case.name,
                            f"{type(context.test).__name__} never calls check_{check}()")]
    return got


def check_output(case, context) -> list:
    if context.test is not None:
        return results_from_test(case, context, "output")
    from harness.judging.output_judge import check_case

    return check_case(case, context)


def check_grad(case, context) -> list:
    if context.test is not None:
        return results_from_test(case, context, "grad")
    from harness.judging.grad_judge import check_case

    return check_case(case, context)
