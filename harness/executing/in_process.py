"""Run checks on a case (`run_case`) or an OpTest class (`run_test`) in THIS process: each
check in try/except, under a SIGALRM time limit, the generators seeded before every setUp and
check. The pool's workers, the pytest plugin's fallback and `verify_reproducer` run here.
"""
from __future__ import annotations

import contextlib
import signal
import threading
import time

from harness.backend.case import Case, case_from_test
from harness.checks.base import TimedOut, Uncaught
from harness.backend.context import CheckContext, describe_error
from harness.selecting.discovery import DiscoveredTest, seed_all
from harness.optest.methods import declare_optest_methods, record_optest_arguments, verdicts
from harness.options import DEFAULT_SEED
from harness.checks.catalog import all_checks, get_check
from harness.reporting.report import FAIL, SKIP, CheckResult
from harness.optest.reproduce import verify

__all__ = ["run_case", "run_test", "run_checks", "CheckTimeout", "verify_reproducer"]


class CheckTimeout(BaseException):
    """Raised by the alarm when a check runs past its time limit."""


@contextlib.contextmanager
def _alarm(seconds):
    """Raise CheckTimeout after `seconds` (main thread only; else no limit)."""
    if not (seconds and hasattr(signal, "setitimer") and
            threading.current_thread() is threading.main_thread()):
        yield
        return

    def on_alarm(signum, frame):
        raise CheckTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def in_time(fn, check: str, case: str, timeout: float | None) -> list[CheckResult]:
    """fn()'s results under the time limit, else the one result that says it ran out."""
    try:
        with _alarm(timeout):
            return list(fn() or [])
    except CheckTimeout:
        return [CheckResult(check, FAIL, "", "", case, f"timed out after {timeout:g}s: the op "
                            f"(or the check) hangs", kind=TimedOut.kind)]


def _selected_specs(checks):
    if checks is None:
        return [s for s in all_checks() if s.default]
    return [get_check(name) for name in checks]


def _due(checks, context: CheckContext, first_case: bool) -> list:
    """The selected checks this case runs (an op-wide one on the first case only)."""
    return [s for s in _selected_specs(checks)
            if (s.per_case or first_case) and s.name not in context.op_level]


def run_checks(case: Case, context: CheckContext, checks=None, first_case: bool = True,
               emit=None) -> list[CheckResult]:
    """Every selected check on one case; each isolated (errors and time limit)."""
    out: list[CheckResult] = []
    skip_map = (case.options or {}).get("skip", {})
    for spec in _due(checks, context, first_case):
        if emit:
            emit(("start", spec.name))
        if spec.name in skip_map:
            got = [CheckResult(spec.name, SKIP, "", "", case.name, str(skip_map[spec.name]))]
        else:
            got = _run_one(spec, case, context)
        for r in got:
            if not r.case:
                r.case = case.name
        out.extend(got)
        if emit:
            emit(("results", got))
    return out


def _run_one(check, case, context) -> list[CheckResult]:
    seed_all(context.seed)
    started = time.monotonic()
    try:
        return in_time(lambda: check(case, context), check.name, case.name, context.timeout)
    except Exception as exc:  # noqa: BLE001 - a failing kernel is a failed check
        return [CheckResult(check.name, FAIL, "", "", case.name,
                            f"raised {describe_error(exc)}", kind=Uncaught.kind)]
    finally:
        context.cache.setdefault("durations", {})[check.name] = time.monotonic() - started


def run_case(case: Case, checks=None, seed: int = DEFAULT_SEED, timeout: float | None = None,
             test=None, first_case: bool = True, **context_options) -> list[CheckResult]:
    """Run the checks on a hand-made (or converted) Case in this process."""
    context = CheckContext(seed=seed, timeout=timeout, test=test, **context_options)
    return run_checks(case, context, checks, first_case)


def run_test(discovered: DiscoveredTest, checks=None, seed: int = DEFAULT_SEED,
             timeout: float | None = None, first_case: bool = True, emit=None,
             run_methods: bool = True, **context_options) -> list[CheckResult]:
    """Set up an OpTest class afresh (seeded) and run the checks on it, in this process.
    With `emit`, every result returned is also emitted (`("results", [...])`).
    `run_methods=False`: the OpTest's own test methods are only recorded, not run (they
    crashed the worker before: harness.executing.pool reruns the class's other checks without them)."""
    name = discovered.name

    def give(results):
        if emit and results:
            emit(("results", results))
        return results

    def failed(message):
        return give([CheckResult("output", FAIL, "", "", name, message)])

    if discovered.error:
        return failed(discovered.error)
    test = discovered.cls("runTest")
    seed_all(seed)
    try:
        test.setUp()
    except Exception as exc:  # noqa: BLE001
        return failed(f"setUp raised {type(exc).__name__}: {exc}")
    context = CheckContext(seed=seed, timeout=timeout, test=test, **context_options)
    pre = []
    # the OpTest's own methods first: they declare what output and grad judge and record
    # what it differentiates (grad_inputs/grad_outputs) on its Case, which the variant
    # checks need
    if run_methods and any(s.name in ("output", "grad") or s.variants != ("case",)
                           for s in _selected_specs(checks)):
        if emit:
            emit(("start", "output"))
        seed_all(seed)
        try:
            with _alarm(timeout):
                context.cache["optest"] = declare_optest_methods(test, name, seed)
        except CheckTimeout:
            pre = failed(f"timed out after {timeout:g}s in the OpTest's test methods")
            context.cache["optest"] = []
    else:
        # the OpTest's methods are not judged here (--checks precision, say), but what
        # they would differentiate must still reach the case: declared, not judged
        record_optest_arguments(test, name, seed)
    try:
        case = case_from_test(test, discovered.source)
    except Exception as exc:  # noqa: BLE001
        return pre + failed(f"cannot make a Case of {name}: {type(exc).__name__}: {exc}")
    refused = (case.options or {}).get("op_refuses")
    if refused and not any(r.status == FAIL for r in verdicts(context.cache.get("optest", []))):
        # the op refuses the case on purpose and the OpTest's own methods expect it (they
        # caught its error and passed): nothing runs for the other checks to judge
        reason = f"the op refuses this case ({refused}) and the OpTest expects it to"
        return pre + give([CheckResult(s.name, SKIP, "", "", name, reason)
                           for s in _due(checks, context, first_case)
                           if s.name not in ("output", "grad")])
    return pre + run_checks(case, context, checks, first_case, emit)


def verify_reproducer(spec: dict) -> bool:
    """harness.optest.reproduce.verify for any check (run by name on the reproducer's case): the
    fuzzer's verifier, here because harness.optest.reproduce imports no check registry."""
    return verify(spec, lambda case, check, seed: run_case(case, checks=[check], seed=seed))

