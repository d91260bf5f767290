"""`run(selection, ...) -> Outcome`: THE call a front door makes to test ops. The selection
(harness.suite.select) is made by the caller; this plans the tasks once (harness.run.plan),
runs them in the fork pool and adds the op-level verdicts (harness.verdicts.op_level).
`progress(total)` is a context manager giving an `advance()` callable.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from harness.options import unusable_selection
from harness.options import DEFAULT_SEED, DEFAULT_TIMEOUT
from harness.report import SKIP, CheckResult
from harness.run import OpReport, op_level_checks, plan, run_ops
from harness.verdicts import op_level

__all__ = ["run", "Outcome"]


@dataclass
class Outcome:
    reports: list                                   # [OpReport], in the selection's order
    seconds: dict = field(default_factory=dict)     # {op: seconds its tasks ran}
    notes: list = field(default_factory=list)       # lines for the end of the report


def run(selection, ops=None, checks=None, seed: int = DEFAULT_SEED,
        timeout: float | None = DEFAULT_TIMEOUT, jobs: int = 1, isolate: bool = True,
        fuzz: int = 0, progress=None) -> Outcome:
    """Test the selected ops (only `ops` of them, when given: a shard)."""
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
        tasks, _ = plan(runnable, selection.by_op, fuzz, checks, op_checks)
        task_seconds: dict = {}
        bar = progress(len(tasks)) if progress is not None else \
            contextlib.nullcontext(lambda: None)
        with bar as advance:
            def done(index):    # an op's time: the sum of its tasks' own times
                op = tasks[index].op
                out.seconds[op] = out.seconds.get(op, 0.0) + task_seconds.get(index, 0.0)
                advance()

            reports = run_ops(runnable, selection.by_op, checks=checks, seed=seed,
                              timeout=timeout, jobs=jobs, isolate=isolate, fuzz=fuzz,
                              progress=done, task_seconds=task_seconds,
                              planned=(tasks, op_checks))
    reports = op_level(selection, reports, checks, unusable)
    out.reports = [r for r in reports if r.op in wanted]
    return out
