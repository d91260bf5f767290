"""An OpTest's own `test_*` methods as declarations: inside `declaring()` their
check_output / check_grad calls judge nothing; each records what it checks (a `Declared`:
the Case as it stood, the call's arguments, the run's options) and returns it. The `output`
and `grad` checks judge those declarations (`judge_declared`) through the one output judge
and the one gradient judge (harness.judging.output_judge.check_output /
harness.judging.grad_judge.check_grad), as the same calls do at once under plain pytest.
Imports no check and nothing of harness.optest.op_test (which builds on it).
"""
from __future__ import annotations

import contextlib
import copy
import unittest
from dataclasses import dataclass, replace
from typing import Callable

from harness.judging.grad_judge import check_grad
from harness.judging.output_judge import check_output
from harness.options import Options, using
from harness.reporting.error_text import first_line
from harness.selecting.discovery import seed_all
from harness.reporting.report import FAIL, SKIP, CheckResult

__all__ = ["Declared", "declaring", "current_plan", "declare_optest_methods",
           "run_optest_methods", "record_optest_arguments", "judge_declared", "verdicts"]

JUDGES = {"output": check_output, "grad": check_grad}
_plans: list[list] = []


@dataclass(eq=False)
class Declared:
    """One check_output / check_grad call of an OpTest: `check` ("output" or "grad"), the
    Case as it stood at the call (its slot dicts copied: a method may change the test's
    data between two calls), the judge's keyword `arguments`, the run's `options` at the
    call (a `check_*_with_place` restricts the places) and the test's `guard` (the context
    its checks are judged in). `verdict()` judges it once; `settle(results)` gives it a
    verdict decided otherwise (the Paddle mode's op error that the test expects)."""
    check: str
    case: object
    arguments: dict
    options: Options
    guard: Callable = contextlib.nullcontext
    results: list | None = None

    def __post_init__(self):
        slots = ("inputs", "outputs", "attrs")
        self.case = replace(self.case, **{s: {k: copy.copy(v) if isinstance(v, list) else v
                                              for k, v in (getattr(self.case, s) or {}).items()}
                                          for s in slots})

    def verdict(self) -> list[CheckResult]:
        __tracebackhide__ = True
        if self.results is None:
            with using(self.options), self.guard():
                self.settle(JUDGES[self.check](self.case, **self.arguments))
        return self.results

    def settle(self, results: list[CheckResult]) -> None:
        self.results = list(results)

    def __iter__(self):
        return iter(self.verdict())


@contextlib.contextmanager
def declaring():
    """Within: OpTest.check_output / check_grad append a `Declared` to the yielded plan
    (and return it) instead of judging."""
    plan: list = []
    _plans.append(plan)
    try:
        yield plan
    finally:
        _plans.pop()


def current_plan() -> list | None:
    """The plan of the innermost `declaring()`, or None (then check_* calls judge)."""
    return _plans[-1] if _plans else None


def declare_optest_methods(test, case_name: str, seed: int | None = None) -> list:
    """Run every test_* method of an OpTest instance under `declaring()`: the plan, in call
    order, of `Declared` calls and the CheckResults of what the methods did besides (a
    method that raised fails, one that skipped skips; reported under `grad` when its name
    says grad, else `output`). The first method runs on `test`; each other on a fresh
    instance after its own setUp (seeded with `seed` when given, so its data is the first
    one's)."""
    plan: list = []
    names = sorted(n for n in dir(type(test)) if n.startswith("test") and
                   callable(getattr(type(test), n, None)))
    for k, method in enumerate(names):
        with declaring() as declared:
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
        plan.extend(declared)
        if error is not None:
            check = "grad" if "grad" in method else "output"
            plan.append(CheckResult(check, error[0], "", "", case_name, error[1]))
    return plan


def verdicts(plan, check: str | None = None) -> list[CheckResult]:
    """The results of a plan's items of `check` (None: all), in order: each `Declared`
    judged (once), each CheckResult as it is."""
    out: list[CheckResult] = []
    for item in plan:
        if check is None or item.check == check:
            out.extend(item.verdict() if isinstance(item, Declared) else [item])
    return out


def run_optest_methods(test, case_name: str, seed: int | None = None) -> list[CheckResult]:
    """The verdicts of every test_* method's declarations (`declare_optest_methods`)."""
    return verdicts(declare_optest_methods(test, case_name, seed))


def record_optest_arguments(test, case_name: str, seed: int | None = None) -> None:
    """What the OpTest's methods check (check_grad's inputs, outputs, options) is recorded
    on `test` and its Case; nothing is judged."""
    try:
        declare_optest_methods(test, case_name, seed)
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


def judge_declared(case, context, check: str) -> list[CheckResult]:
    """The `check` ("output" or "grad") of `context.test`: its declarations judged (the plan
    made once per context: `context.cache["optest"]`); a skip when it never calls that
    check_*."""
    cache = context.cache
    if "optest" not in cache:
        cache["optest"] = declare_optest_methods(context.test, case.name)
    got = verdicts(cache["optest"], check)
    if not got:
        return [CheckResult(check, SKIP, "", "", case.name,
                            f"{type(context.test).__name__} never calls check_{check}()")]
    return got
