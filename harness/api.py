"""`run(selection, ...) -> Outcome`: THE call a front door makes to test ops, on the caller's
selection (harness.selecting.suite.select): it plans the tasks once (harness.executing.pool.plan), runs them in
the fork pool and adds the op-level verdicts, decided here once for every front door
(`op_level`). `progress(total)` is a context manager giving an `advance()` callable.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from harness.backend import dispatch as backends
from harness.options import DEFAULT_SEED, DEFAULT_TIMEOUT, unusable_selection
from harness.reporting.report import FAIL, SKIP, CheckResult
from harness.executing.pool import OpReport, op_level_checks, plan, run_ops
from harness.spec import knob

__all__ = ["run", "Outcome", "NO_GRADIENT_TEST", "no_optest_result", "lacks_gradient_test",
           "op_verdicts", "op_level"]


@dataclass
class Outcome:
    reports: list                                   # [OpReport], in the selection's order
    seconds: dict = field(default_factory=dict)     # {op: seconds its tasks ran}
    notes: list = field(default_factory=list)       # lines for the end of the report


def run(selection, ops=None, checks=None, seed: int = DEFAULT_SEED,
        timeout: float | None = DEFAULT_TIMEOUT, jobs: int = 1, isolate: bool = True,
        fuzz: int = 0, progress=None, executor=None) -> Outcome:
    """Test the selected ops (only `ops` of them, when given: a shard). `executor`: runs
    the planned tasks (default: the fork pool, harness.executing.pool.run_tasks); `advance(failed=...)`
    says whether the task that ended has a failed check."""
    wanted = set(selection.ops if ops is None else ops)
    runnable = [op for op in selection.runnable if op in wanted]
    unusable = unusable_selection()
    out = Outcome([])
    if unusable:
        out.notes.append(f"nothing ran: {unusable}")
        reports = [OpReport(op, [CheckResult("output", SKIP, "", "", "", unusable)])
                   for op in runnable]
    else:
        op_checks = op_level_checks(checks) if isolate else []
        tasks = plan(runnable, selection.by_op, fuzz, checks, op_checks)
        task_seconds: dict = {}
        results: dict = {}
        bar = progress(len(tasks)) if progress is not None else \
            contextlib.nullcontext(lambda **_: None)
        with bar as advance:
            def done(index):    # an op's time: the sum of its tasks' own times
                op = tasks[index].op
                out.seconds[op] = out.seconds.get(op, 0.0) + task_seconds.get(index, 0.0)
                advance(failed=any(r.status == FAIL for r in results.get(index, ())))

            reports = run_ops(runnable, selection.by_op, checks=checks, seed=seed,
                              timeout=timeout, jobs=jobs, isolate=isolate, fuzz=fuzz,
                              progress=done, task_seconds=task_seconds,
                              planned=(tasks, op_checks), executor=executor, results=results)
    reports = op_level(selection, reports, checks, unusable)
    out.reports = [r for r in reports if r.op in wanted]
    return out


NO_GRADIENT_TEST = "no gradient test"
_NEVER_CALLED = "never calls check_grad()"


def no_optest_result(op: str, exempt: dict) -> tuple[CheckResult, str]:
    """(the result, the op's exempt reason or "") for an op without any OpTest."""
    reason = exempt.get(op)
    if reason:
        return CheckResult("output", SKIP, "", "", "", f"exempt: {reason}"), reason
    return CheckResult("output", FAIL, "", "", "",
                       f"no OpTest found for op '{op}': write one, or exempt it with a "
                       f"reason in pyproject.toml ([tool.opkit.exempt] {op} = \"...\")"), ""


def _opt_out(cls) -> bool:
    skips = knob(cls, "opkit_skip") or {}
    return bool(skips.get("grad") if isinstance(skips, dict) else None)


def _never_called(result: CheckResult) -> bool:
    return result.check == "grad" and result.status == SKIP and \
        result.message.endswith(_NEVER_CALLED)


def lacks_gradient_test(op: str, classes: list, results) -> bool:
    """The op has a grad op, every one of its OpTest classes ran its methods without
    calling check_grad (the `grad` check said so for each: no other `grad` result, such as
    a check_grad call or a test_*grad* method that raised), and none opts out."""
    if not classes or not backends.declared().has_op(op) or not backends.declared().has_grad(op):
        return False
    if any(_opt_out(c) for c in classes) or \
            any(r.check == "grad" and not _never_called(r) for r in results):
        return False
    told = {r.case for r in results if _never_called(r)}
    return all(c.__name__ in told for c in classes)


def op_verdicts(op: str, classes: list, results: list, checks=None) -> list[CheckResult]:
    """The op-level results to add to an op's results, from what ran (`results`: every
    result of the op's classes): "no gradient test" when `grad` was among the checks."""
    if not classes or checks is not None and "grad" not in checks or \
            not lacks_gradient_test(op, classes, results):
        return []
    names = ", ".join(c.__name__ for c in classes)
    return [CheckResult("grad", FAIL, "", "", "",
                        f"{NO_GRADIENT_TEST}: op '{op}' has a grad op but none of its OpTests "
                        f"({names}) calls check_grad; add one, or opt out with "
                        f"opkit_skip = {{\"grad\": \"<reason>\"}} on the OpTest")]


def op_level(selection, reports, checks=None, unusable: str = "") -> list:
    """The reports of every selected op with the op-level verdicts added: an op with no
    OpTest (a failure, or exempt with a reason), an op whose OpTests never check a
    gradient, the selection's broken test files and OpTests (`reports`: harness.executing.pool.OpReport
    of the runnable ops)."""
    by_name = {r.op: r for r in reports}
    out = []
    for op in selection.ops:
        rep = by_name.get(op) or OpReport(op)
        if op in selection.broken:
            rep.results = selection.broken[op] + rep.results
        tests = selection.by_op.get(op) or []
        if not tests and op not in selection.broken and not unusable:
            result, reason = no_optest_result(op, selection.exempt)
            rep.results = [result]
            rep.exempt = reason
            rep.note = ""
        elif tests and not unusable:
            rep.results += op_verdicts(op, [t.cls for t in tests], rep.results, checks)
        out.append(rep)
    return out
