"""The fork pool: every task (an OpTest class, an op-level check of an op, `fuzz` over an
op, a hand-made Case) in a worker forked from this process, so that a crash or a hang that
ignores SIGALRM is a failed check too. docs/harness.md "Failure isolation".
"""
from __future__ import annotations

import contextlib
import faulthandler
import gc
import importlib
import multiprocessing
import os
import pkgutil
import signal
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from typing import Callable

import harness.inputs.variants as variants
from harness.backend.case import Case, case_from_test
from harness.checks.base import Crashed, TimedOut
from harness.executing.in_process import _selected_specs, in_time, run_case, run_checks, run_test
from harness.backend.context import CheckContext
from harness.selecting.discovery import DiscoveredTest, seed_all
from harness.processes.forking import can_fork, die_with_parent
from harness.executing.fuzz import fuzz_op
from harness.options import DEFAULT_SEED, DEFAULT_TIMEOUT
from harness.checks.catalog import get_check
from harness.reporting.report import FAIL, PASS, SKIP, CheckResult
from harness.spec import op_level_hook

__all__ = ["OpReport", "run_case", "run_ops", "Task", "KINDS", "case_from_test", "plan",
           "run_tasks", "op_level_checks", "preload", "backstop_seconds"]


@dataclass
class OpReport:
    op: str
    results: list[CheckResult] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    note: str = ""              # e.g. why the whole op was skipped
    exempt: str = ""            # [tool.opkit.exempt] reason: no OpTest needed (a skip)

    @property
    def status(self) -> str:
        if any(r.status == FAIL for r in self.results):
            return FAIL
        if any(r.status == "unconfirmed" for r in self.results):
            return "unconfirmed"    # exit 0: harness.judging.unconfirmed
        return SKIP if all(r.status == SKIP for r in self.results) else PASS

    def to_json(self) -> dict:
        data = {"op": self.op, "status": self.status,
                "checks": [r.to_json() for r in self.results]}
        if self.note:
            data["message"] = self.note
        if self.exempt:
            data["exempt"] = self.exempt
        return data


# -- tasks: one dispatch table -------------------------------------------------------------
@dataclass
class Task:
    """One unit of work of the pool. `kind` is a key of `KINDS`, which says how it runs and
    what it is called; the constructors below are how tasks are made (`plan`, the zygote)."""
    op: str
    kind: str                       # a key of KINDS: "test" | "case" | "op" | "fuzz"
    test: DiscoveredTest | None = None          # "test": the OpTest class
    tests: list = field(default_factory=list)   # "op", "fuzz": every OpTest of the op
    case: Case | None = None                    # "case": a hand-made Case
    first_case: bool = True
    name: str = ""                  # default: KINDS[kind].name(task)
    check: str = ""                 # "op": the op-level check it runs
    skip_checks: tuple = ()         # "test": checks not to run again (they crashed or hung
                                    # the worker, or reported before it died)
    reruns: int = 0                 # how often it was rerun after its worker died

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown task kind {self.kind!r} (one of {', '.join(KINDS)})")
        if not self.name:
            self.name = KINDS[self.kind].name(self)

    @classmethod
    def of_test(cls, op: str, test: DiscoveredTest, first_case: bool = True) -> Task:
        """Every (per-case) check on one OpTest class."""
        return cls(op, "test", test=test, first_case=first_case)

    @classmethod
    def of_case(cls, op: str, case: Case, first_case: bool = True) -> Task:
        """Every (per-case) check on a hand-made Case."""
        return cls(op, "case", case=case, first_case=first_case)

    @classmethod
    def of_op_check(cls, op: str, tests: list, check: str) -> Task:
        """The op-level check `check` (e.g. `state`) over every OpTest class of the op."""
        return cls(op, "op", tests=list(tests), check=check)

    @classmethod
    def of_fuzz(cls, op: str, tests: list) -> Task:
        """`fuzz` over every OpTest class of the op (the budget is the run's)."""
        return cls(op, "fuzz", tests=list(tests))

    @property
    def is_case(self) -> bool:
        """Its name is one of the op's cases in the report (an op-level check's is not)."""
        return KINDS[self.kind].is_case


def _run_test_task(task, checks, seed, timeout, fuzz, emit, context_options):
    if task.skip_checks:          # a rerun after a crash: the checks it did not reach
        checks = [s.name for s in _selected_specs(checks) if s.name not in task.skip_checks]
        run_test(task.test, checks, seed, timeout, task.first_case, emit,
                 run_methods="output" not in task.skip_checks, **context_options)
        return
    run_test(task.test, checks, seed, timeout, task.first_case, emit, **context_options)


RERUN_NOTE = "; the class's other checks were run again in a fresh worker without it"

#: how often one OpTest class's task is rerun after its worker died (each rerun without the
#: check that killed it): a crash in one check must not cost the class its other checks
MAX_RERUNS = 8


def _rerun(task: Task, current: str | None, reported) -> Task | None:
    """The task to run after its worker died in check `current` (None: give up): the same
    OpTest class without that check and those that already reported. A crash in `output`
    (the OpTest's own methods) also drops `grad` (the same methods): the rerun records what
    they check without running them."""
    if task.kind != "test" or not current or task.reruns >= MAX_RERUNS:
        return None
    done = set(task.skip_checks) | {current} | {r.check for r in reported}
    if current == "output":
        done.add("grad")
    return replace(task, skip_checks=tuple(sorted(done)), reruns=task.reruns + 1)


def _run_case_task(task, checks, seed, timeout, fuzz, emit, context_options):
    context = CheckContext(seed=seed, timeout=timeout, **context_options)
    run_checks(task.case, context, checks, task.first_case, emit)


def _run_op_task(task, checks, seed, timeout, fuzz, emit, context_options):
    spec = get_check(task.check)
    context = CheckContext(seed=seed, timeout=timeout, **context_options)
    emit(("start", spec.name))
    seed_all(seed)
    emit(("results", in_time(lambda: spec.op_results(task.op, task.tests, context), spec.name,
                             task.op, timeout)))


def _run_fuzz_task(task, checks, seed, timeout, fuzz, emit, context_options):
    results = []
    for t in task.tests:          # each class a step of its own (the pool's backstop)
        emit(("start", "fuzz"))
        got = fuzz_op(task.op, [t.cls], fuzz, seed=seed, timeout=timeout)
        emit(("results", got))
        results += got
    if not results:
        emit(("results", fuzz_op(task.op, [], fuzz, seed=seed, timeout=timeout)))


@dataclass(frozen=True)
class TaskKind:
    run: Callable        # (task, checks, seed, timeout, fuzz, emit, context_options)
    name: Callable       # task -> its default name
    is_case: bool        # its name is one of the op's cases in the report


KINDS = {
    "test": TaskKind(_run_test_task, lambda t: t.test.name, True),
    "case": TaskKind(_run_case_task, lambda t: t.case.name, True),
    "op": TaskKind(_run_op_task, lambda t: f"{t.check}({t.op})", False),
    "fuzz": TaskKind(_run_fuzz_task, lambda t: f"fuzz({t.op})", True),
}


# -- workers and the pool -----------------------------------------------------------------
def _execute(task: Task, checks, seed, timeout, fuzz, emit, context_options):
    # the variants feed kernels zero-size, huge and tiny values on purpose: numpy's
    # RuntimeWarnings (divide by zero, overflow, ...) are expected, not findings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        KINDS[task.kind].run(task, checks, seed, timeout, fuzz, emit, context_options)


class _Sender:
    """A worker's messages to the pool: results in batches (at most every FLUSH_SECONDS,
    and before the task ends), the check now running in a shared slot the parent reads on a
    crash or a time limit: each message wakes the parent, and on a busy machine those
    wake-ups cost the workers more than the checks they report."""

    FLUSH_SECONDS = 0.05

    def __init__(self, conn, slot):
        self.conn, self.slot = conn, slot
        self.pending: list = []
        self.last = time.monotonic()
        self.step = 0             # counts the slot's changes: the parent's backstop clock

    def _mark(self, name: str) -> None:
        self.step += 1
        self.slot.value = f"{self.step}|{name}".encode()[: len(self.slot) - 1]

    def __call__(self, msg):
        if msg[0] == "start":
            self._mark(msg[1])
            return
        if msg[0] == "results":
            self.pending.extend(msg[1])
            self._mark("")
            if time.monotonic() - self.last < self.FLUSH_SECONDS:
                return
        if self.pending:
            self.conn.send(("results", self.pending))
            self.pending = []
        if msg[0] != "results":           # "done", "error": after the results
            self.conn.send(msg)
        self.last = time.monotonic()


def _worker(conn, task, checks, seed, timeout, fuzz, context_options, slot, parent_pid=None):
    die_with_parent(parent_pid)       # killed with the run (the pool or the zygote)
    emit = _Sender(conn, slot)
    with contextlib.suppress(OSError):
        sys.stdin = open(os.devnull)  # noqa: SIM115
    faulthandler.disable()   # a crashing kernel is reported by the parent, not dumped
    try:
        _execute(task, checks, seed, timeout, fuzz, emit, context_options)
        emit(("done", None))
    except BaseException as exc:  # noqa: BLE001
        emit(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"))
    finally:
        conn.close()


def backstop_seconds(timeout: float | None) -> float | None:
    """How long the pool lets one step of a worker (one check, or the work between two) run
    before it kills the worker: about twice `--timeout`. Each check runs under its own
    `timeout` (SIGALRM); a kernel hung in native code, or one that blocks the signal, never
    sees it, and the pool's kill is what reports it as `timeout`."""
    return None if not timeout else 2 * timeout + 2


class _Watch:
    """The backstop clock of one worker: restarted whenever the worker's slot changes (a
    check starts or reports), so the limit holds per check, not per task."""

    def __init__(self, limit: float | None, now: float):
        self.limit, self.seen, self.since = limit, None, now

    def expired(self, value: bytes, now: float) -> bool:
        if value != self.seen:
            self.seen, self.since = value, now
        return bool(self.limit) and now - self.since > self.limit


def _slot_check(value: bytes) -> str | None:
    """The check a worker's slot names ("step|name"), or None between checks."""
    return value.decode(errors="replace").partition("|")[2] or None


def _crash_message(exitcode) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process crashed ({name})"
    return f"the worker process exited with status {exitcode}"


def run_tasks(tasks: list[Task], checks=None, seed: int = DEFAULT_SEED,
              timeout: float | None = DEFAULT_TIMEOUT, jobs: int = 1, isolate: bool = True,
              fuzz: int = 0, on_task_done=None, context_options=None,
              task_seconds: dict | None = None, results: dict | None = None) -> dict[int, list]:
    """Run tasks; {task index: [CheckResult, ...]}. `on_task_done(index)` after each, once
    `task_seconds` (a dict, when given) has {task index: seconds the task ran} and
    `results` (a dict, when given: the one returned) the task's results. `isolate`:
    each task in a worker forked from this process, `jobs` at a time (where it may fork);
    else one after another in this process. An executor (harness.executing.ray_pool, harness.executing.resume) has
    this signature."""
    context_options = dict(context_options or {})
    out: dict[int, list] = {} if results is None else results

    def done(i, seconds):
        if task_seconds is not None:
            task_seconds[i] = seconds
        if on_task_done:
            on_task_done(i)

    if not isolate or not can_fork():
        for i, task in enumerate(tasks):
            out[i] = got = []

            def emit(msg, got=got):
                if msg[0] == "results":
                    got.extend(msg[1])

            began = time.monotonic()
            try:
                _execute(task, checks, seed, timeout, fuzz, emit, context_options)
            except Exception as exc:  # noqa: BLE001
                got.append(CheckResult("output", FAIL, "", "", task.name,
                                       f"the harness failed: {type(exc).__name__}: {exc}"))
            done(i, time.monotonic() - began)
        return out

    preload(checks, fuzz)

    # objects that exist now are never collected in the workers: freezing them keeps each
    # forked worker's garbage collector from touching (and so copying) the parent's pages
    gc.collect()
    gc.freeze()
    exiting: list = []
    ctx = multiprocessing.get_context("fork")
    backstop = backstop_seconds(timeout)
    pending = list(enumerate(tasks))
    running = {}   # conn -> (index, process, started, slot: the check it runs now)
    watches = {}   # conn -> _Watch
    running_task = {}   # conn -> the Task it runs (a rerun's differs from tasks[i])
    jobs = max(1, int(jobs or 1))
    free_slots = [ctx.Array("c", 96, lock=False) for _ in range(min(jobs, len(tasks)) or 1)]

    def fail(i, current, message, kind=""):
        out[i].append(CheckResult(current or "output", FAIL, "", "", tasks[i].name, message,
                                  kind=kind))

    def finish(conn, now, rerun=None):
        watches.pop(conn, None)
        running_task.pop(conn, None)
        i, proc, started, slot = running.pop(conn)
        exiting.append(proc)         # reaped below: its exit need not hold the slot
        conn.close()
        free_slots.append(slot)
        if rerun is not None:        # its other checks, in a fresh worker, before the rest
            pending.insert(0, (i, rerun))
            return
        done(i, now - started)

    while pending or running:
        exiting = [p for p in exiting if p.exitcode is None]   # exitcode polls (reaps)
        while pending and len(running) < jobs:
            i, task = pending.pop(0)
            parent, child = ctx.Pipe(duplex=False)
            slot = free_slots.pop()
            slot.value = b""
            proc = ctx.Process(target=_worker, args=(child, task, checks, seed, timeout, fuzz,
                                                     context_options, slot, os.getpid()),
                               daemon=True)
            proc.start()
            child.close()
            out.setdefault(i, [])
            running[parent] = (i, proc, time.monotonic(), slot)
            running_task[parent] = task
            watches[parent] = _Watch(backstop, time.monotonic())
        for conn in wait(list(running), timeout=0.5):
            i, proc, started, slot = running[conn]
            current = _slot_check(slot.value)
            rerun = None
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                proc.join(5)
                rerun = _rerun(running_task[conn], current, out[i])
                fail(i, current, f"{_crash_message(proc.exitcode)} while running check "
                                 f"'{current or '?'}'" + (RERUN_NOTE if rerun else ""),
                     Crashed.kind)
                msg = ("done", None)
            if msg[0] == "results":
                out[i].extend(msg[1])
                continue
            if msg[0] == "error":
                fail(i, current, f"the harness failed: {msg[1].splitlines()[0]}")
            finish(conn, time.monotonic(), rerun)
        now = time.monotonic()
        for conn, (i, proc, _started, slot) in list(running.items()):
            watch = watches[conn]
            if watch.expired(slot.value, now):
                current = _slot_check(slot.value)
                proc.kill()
                proc.join(5)
                rerun = _rerun(running_task[conn], current, out[i])
                fail(i, current, f"timed out after {now - watch.since:.0f}s (killed) while "
                                 f"running check '{current or '?'}': past twice the --timeout "
                                 f"of {timeout:g}s (a kernel that never returns to Python: "
                                 f"the check's own limit could not interrupt it)"
                                 + (RERUN_NOTE if rerun else ""), TimedOut.kind)
                finish(conn, now, rerun)
    for proc in exiting:
        proc.join(5)
    gc.unfreeze()
    return out


def preload(checks=None, fuzz: int = 0) -> None:
    """Import, once in this process, every module that the forked workers would import
    lazily (the checks, the variants, the gradient engine, hypothesis): each worker
    otherwise loads them again, and without cached bytecode (PYTHONDONTWRITEBYTECODE)
    compiles them again -- measured as a third of the workers' time on `--all`."""
    _selected_specs(checks)        # imports every selected check's module
    names = ["harness.judging.numeric_gradient", "harness.backend.seam", "harness.judging.one_sided",
             "harness.optest.methods", "harness.judging.output_judge", "harness.judging.grad_judge",
             "harness.checks.runs.siblings", "harness.inputs.strategies"]
    names += [f"harness.inputs.variants.{m.name}" for m in pkgutil.iter_modules(variants.__path__)]
    if fuzz:
        names += ["harness.executing.fuzz", "hypothesis.extra.numpy", "numpy.ma",
                  "hypothesis.strategies._internal.flatmapped"]
    for name in names:
        with contextlib.suppress(Exception):   # the worker that needs it reports it
            importlib.import_module(name)
    # explore's generated cases and fuzzing draw with hypothesis (a broken one they report)
    with contextlib.suppress(Exception):
        from harness.inputs.strategies import prepare_hypothesis

        prepare_hypothesis()


def op_level_checks(checks=None) -> list[str]:
    """The selected checks that run once per op over all its OpTests when cases run in
    forked workers (a Check with `op_results(op, tests, context)`, e.g. `state`)."""
    if not can_fork():
        return []
    return [s.name for s in _selected_specs(checks) if op_level_hook(s) is not None]


def plan(ops: list[str], discovered: dict[str, list[DiscoveredTest]], fuzz: int = 0,
         checks=None, op_level=()) -> list[Task]:
    """Tasks for the ops: one per OpTest class, one per op-level check (`op_level`; the
    cases' workers must then leave them out: `context_options["op_level"]`, as run_ops
    does) and op, one fuzz task per op with --fuzz. An op without OpTest has none."""
    tasks = []
    for op in ops:
        tests = discovered.get(op, [])
        tasks += [Task.of_test(op, t, first_case=(k == 0)) for k, t in enumerate(tests)]
        tasks += [Task.of_op_check(op, tests, name) for name in op_level if tests]
        if fuzz and tests:
            tasks.append(Task.of_fuzz(op, tests))
    return tasks


def run_ops(ops: list[str], discovered: dict[str, list[DiscoveredTest]], checks=None,
            seed: int = DEFAULT_SEED, timeout: float | None = DEFAULT_TIMEOUT, jobs: int = 1,
            isolate: bool = True, fuzz: int = 0, progress=None,
            context_options=None, task_seconds: dict | None = None,
            planned=None, executor=None, results: dict | None = None) -> list[OpReport]:
    """One OpReport per op, in the order given. `progress(index)` after each task of
    `plan(...)`; `task_seconds`, `results`: as `run_tasks`. `planned`: (tasks, op_level) the
    caller already planned for the same arguments (harness.api), else planned here.
    `executor`: runs the tasks (default `run_tasks`, the fork pool; harness.executing.ray_pool)."""
    if planned is None:
        op_level = op_level_checks(checks) if isolate else []
        planned = plan(ops, discovered, fuzz, checks, op_level), op_level
    tasks, op_level = planned
    missing = {op: f"no OpTest found for op '{op}'" for op in ops if not discovered.get(op)}
    if op_level:          # the cases' workers leave those checks to the op tasks
        context_options = dict(context_options or {}, op_level=tuple(op_level))
    batch, kept = None, None
    if checks is None or "determinism" in checks:
        # determinism across processes: ONE pair of fresh interpreters for the whole run,
        # working in the background while the cases run (harness.checks.runs.hashseed)
        from harness.checks.runs.hashseed import start_batch

        # a resumed run (harness.executing.resume) holds the earlier runs' results of some ops
        kept = getattr(executor, "kept_hash_seeds", None)
        kept = kept(ops) if kept else {}
        batch = start_batch([op for op in ops if op not in kept], discovered, seed, timeout)
        if batch is not None or kept:
            context_options = dict(context_options or {}, hash_seeds="batch")
    try:
        done = (executor or run_tasks)(tasks, checks, seed, timeout, jobs, isolate, fuzz,
                                       on_task_done=progress,
                                       context_options=context_options,
                                       task_seconds=task_seconds, results=results)
    except BaseException:
        if batch is not None:
            batch.close()
        raise
    reports = {op: OpReport(op) for op in ops}
    for i, task in enumerate(tasks):
        rep = reports[task.op]
        rep.results.extend(done.get(i, []))
        if task.is_case:
            rep.cases.append(task.name)
    if batch is not None:
        for op, results in batch.results(list(reports.values())).items():
            reports[op].results.extend(results)
            if hasattr(executor, "keep_hash_seeds"):
                executor.keep_hash_seeds(op, results)
    for op, results in (kept or {}).items():
        reports[op].results.extend(results)
    for op, reason in missing.items():
        reports[op].note = reason
        reports[op].results.append(CheckResult("output", SKIP, "", "", "", reason))
    return [reports[op] for op in ops]
