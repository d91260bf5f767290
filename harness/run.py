"""Run every check of every case of an op, isolating failures.

- Each check runs inside try/except: a kernel that raises is a failed check with its message.
- Each check has a time limit (`timeout`, seconds): in a worker process a hang is cut by
  SIGALRM (Python-level loops) and, as a backstop, by the parent killing the worker; the
  hung check becomes a failed check and the run goes on.
- With `isolate=True` (what `opkit test` does) every case runs in a forked worker process,
  so a kernel that crashes the interpreter (segfault, os._exit) is a failed check too.
  `jobs` workers run side by side: our own fork-based pool, or with `xdist=True` (what
  `opkit test --jobs N` does when pytest-xdist is importable) N pytest-xdist workers, one
  pytest item per task (`harness.xdist_runner`); each worker runs its items through this
  same pool (one forked child per case), so the results are the same either way.
- Seeds are fixed: the global numpy/random generators are seeded with `seed` before every
  setUp and every check; the seed is in every report.
"""
from __future__ import annotations

from harness.options import DEFAULT_SEED  # noqa: I001

import importlib
import multiprocessing
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field

from harness.case import Case
from harness.checks._support import CheckContext
from harness.checks.base import Crashed, TimedOut, Uncaught
from harness.checks.registry import all_checks, get_check
from harness.discovery import DiscoveredTest, seed_all
from harness.forking import can_fork
from harness.report import FAIL, PASS, SKIP, CheckResult

__all__ = ["OpReport", "run_case", "run_test", "run_ops", "Task", "case_from_test",
           "DEFAULT_TIMEOUT", "CheckTimeout", "selected_specs", "can_fork", "execute_task",
           "task_name", "crash_message", "plan", "run_tasks", "op_level_checks"]

DEFAULT_TIMEOUT = 120.0


class CheckTimeout(BaseException):
    """Raised by the alarm when a check runs past its time limit."""


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
        if self.results and all(r.status == SKIP for r in self.results):
            return SKIP
        return PASS if self.results else SKIP

    def to_json(self) -> dict:
        data = {"op": self.op, "status": self.status,
                "checks": [r.to_json() for r in self.results]}
        if self.note:
            data["message"] = self.note
        if self.exempt:
            data["exempt"] = self.exempt
        return data


def case_from_test(test, source: str = "") -> Case:
    """The Case an OpTest instance describes (its own `to_case()` when it has one)."""
    to_case = getattr(test, "to_case", None)
    if callable(to_case):
        case = to_case()
    else:
        reference = getattr(test, "reference", None)
        case = Case(name=type(test).__name__, op_type=test.op_type,
                    inputs=getattr(test, "inputs", {}) or {},
                    attrs=getattr(test, "attrs", {}) or {},
                    outputs=getattr(test, "outputs", {}) or {},
                    reference=reference if callable(reference) else None)
    if source and not case.source:
        case.source = source
    skips = getattr(test, "opkit_skip", None)
    if skips:
        case.options = dict(case.options or {})
        case.options.setdefault("skip", {}).update(skips)
    return case


# -- running checks in this process --------------------------------------------------------
def _alarm(seconds):
    """Context manager: raise CheckTimeout after `seconds` (main thread only; else no-op)."""
    import contextlib
    import threading

    @contextlib.contextmanager
    def guard():
        usable = (seconds and hasattr(signal, "setitimer") and
                  threading.current_thread() is threading.main_thread())
        if not usable:
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

    return guard()


def _selected_specs(checks):
    if checks is None:
        return [s for s in all_checks() if s.default]
    return [get_check(name) for name in checks]


def run_checks(case: Case, context: CheckContext, checks=None, first_case: bool = True,
               emit=None) -> list[CheckResult]:
    """Every selected check on one case; each isolated (errors and time limit)."""
    out: list[CheckResult] = []
    skip_map = (case.options or {}).get("skip", {}) if case.options else {}
    op_level = getattr(context, "op_level", ())
    for spec in _selected_specs(checks):
        if not spec.per_case and not first_case or spec.name in op_level:
            continue
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
    fn = check
    seed_all(context.seed)
    started = time.monotonic()
    try:
        with _alarm(context.timeout):
            got = list(fn(case, context) or [])
    except CheckTimeout:
        return [CheckResult(check.name, FAIL, "", "", case.name,
                            f"timed out after {context.timeout:g}s: the op (or the check) "
                            f"hangs", kind=TimedOut.kind)]
    except Exception as exc:  # noqa: BLE001 - a failing kernel is a failed check
        from harness.checks._support import describe_error

        return [CheckResult(check.name, FAIL, "", "", case.name,
                            f"raised {describe_error(exc)}", kind=Uncaught.kind)]
    finally:
        context.cache.setdefault("durations", {})[check.name] = time.monotonic() - started
    return got


def run_case(case: Case, checks=None, seed: int = DEFAULT_SEED, timeout: float | None = None,
             test=None, first_case: bool = True, **context_options) -> list[CheckResult]:
    """Run the checks on a hand-made (or converted) Case in this process."""
    context = CheckContext(seed=seed, timeout=timeout, test=test, **context_options)
    return run_checks(case, context, checks, first_case)


def run_test(discovered: DiscoveredTest, checks=None, seed: int = DEFAULT_SEED,
             timeout: float | None = None, first_case: bool = True, emit=None,
             **context_options) -> list[CheckResult]:
    """Set up an OpTest class afresh (seeded) and run the checks on it, in this process.
    With `emit`, every result returned is also emitted (`("results", [...])`)."""
    name = discovered.name

    def give(results):
        if emit and results:
            emit(("results", results))
        return results

    if discovered.error:
        return give([CheckResult("output", FAIL, "", "", name, discovered.error)])
    test = discovered.cls("runTest")
    seed_all(seed)
    try:
        test.setUp()
    except Exception as exc:  # noqa: BLE001
        return give([CheckResult("output", FAIL, "", "", name,
                                 f"setUp raised {type(exc).__name__}: {exc}")])
    context = CheckContext(seed=seed, timeout=timeout, test=test, **context_options)
    wanted = [s.name for s in _selected_specs(checks)]
    pre = []
    # the OpTest's own methods record what it differentiates (grad_inputs/grad_outputs):
    # output and grad report them; the variant checks need the recorded gradients
    if any(n in ("output", "grad") or get_check(n).variants != ("case",) for n in wanted):
        # the OpTest's own methods first: they record grad_inputs/grad_outputs on its Case
        from harness.checks.optest import run_optest_methods

        if emit:
            emit(("start", "output"))
        seed_all(seed)
        try:
            with _alarm(timeout):
                context.cache["optest"] = run_optest_methods(test, name, seed)
        except CheckTimeout:
            pre = give([CheckResult("output", FAIL, "", "", name,
                                    f"timed out after {timeout:g}s in the OpTest's test "
                                    f"methods")])
            context.cache["optest"] = []
    else:
        # the OpTest's methods are not run as checks here (--checks precision, say), but
        # what they would differentiate must still reach the case: recorded, not run
        from harness.checks.optest import record_optest_arguments

        record_optest_arguments(test, name, seed)
    try:
        case = case_from_test(test, discovered.source)
    except Exception as exc:  # noqa: BLE001
        return pre + give([CheckResult("output", FAIL, "", "", name,
                                       f"cannot make a Case of {name}: "
                                       f"{type(exc).__name__}: {exc}")])
    refused = (case.options or {}).get("op_refuses")
    optest = context.cache.get("optest") or []
    if refused and not any(r.status == FAIL for r in optest):
        # the op refuses the case on purpose and the OpTest's own methods expect it (they
        # caught its error and passed): nothing runs for the other checks to judge
        reason = f"the op refuses this case ({refused}) and the OpTest expects it to"
        return pre + give([CheckResult(s.name, SKIP, "", "", name, reason)
                           for s in _selected_specs(checks)
                           if s.name not in ("output", "grad") and
                           (s.per_case or first_case) and
                           s.name not in context.op_level])
    results = run_checks(case, context, checks, first_case, emit)
    return pre + results


# -- tasks, workers and the pool -----------------------------------------------------------
@dataclass
class Task:
    op: str
    kind: str                       # "test" | "fuzz" | "case"
    test: DiscoveredTest | None = None
    tests: list = field(default_factory=list)   # fuzz: every OpTest of the op
    case: Case | None = None
    first_case: bool = True
    name: str = ""
    check: str = ""                 # "op": the op-level check it runs


def _execute(task: Task, checks, seed, timeout, fuzz, emit, context_options):
    # the variants feed kernels zero-size, huge and tiny values on purpose: numpy's
    # RuntimeWarnings (divide by zero, overflow, mean of empty slice) are the expected
    # consequence, not findings -- the checks judge the values -- and would bury the report
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _execute_task(task, checks, seed, timeout, fuzz, emit, context_options)


def _execute_task(task: Task, checks, seed, timeout, fuzz, emit, context_options):
    if task.kind == "op":
        spec = get_check(task.check)
        context = CheckContext(seed=seed, timeout=timeout, **context_options)
        emit(("start", spec.name))
        seed_all(seed)
        try:
            with _alarm(timeout):
                results = list(spec.op_results(task.op, task.tests, context) or [])
        except CheckTimeout:
            results = [CheckResult(spec.name, FAIL, "", "", task.op, f"timed out after "
                                   f"{timeout:g}s: the op (or the check) hangs",
                                   kind=TimedOut.kind)]
        emit(("results", results))
        return
    if task.kind == "fuzz":
        from harness.fuzz import fuzz_op

        emit(("start", "fuzz"))
        results = fuzz_op(task.op, [t.cls for t in task.tests], fuzz, seed=seed,
                          timeout=timeout)
        emit(("results", results))
        return
    if task.kind == "case":
        context = CheckContext(seed=seed, timeout=timeout, **context_options)
        run_checks(task.case, context, checks, task.first_case, emit)
        return
    run_test(task.test, checks, seed, timeout, task.first_case, emit, **context_options)


class _Sender:
    """A worker's messages to the pool: results go out in batches (at most every
    FLUSH_SECONDS, and before the task ends), and the check now running is written to a
    shared slot the parent reads when it needs it (a crash, a time limit) instead of a
    message per check: each message wakes the parent, and on a busy machine those wake-ups
    cost the workers more than the checks they report."""

    FLUSH_SECONDS = 0.05

    def __init__(self, conn, slot=None):
        self.conn, self.slot = conn, slot
        self.pending: list = []
        self.last = time.monotonic()

    def __call__(self, msg):
        if msg[0] == "start" and self.slot is not None:
            name = msg[1].encode()[: len(self.slot) - 1]
            self.slot.value = name
            return
        if msg[0] == "results":
            self.pending.extend(msg[1])
            if self.slot is not None:
                self.slot.value = b""
            if time.monotonic() - self.last < self.FLUSH_SECONDS:
                return
            msg = ("results", self.pending)
            self.pending = []
        else:
            self.flush()
        self.conn.send(msg)
        self.last = time.monotonic()

    def flush(self):
        if self.pending:
            self.conn.send(("results", self.pending))
            self.pending = []


def _worker(conn, task, checks, seed, timeout, fuzz, context_options, slot=None):
    emit = _Sender(conn, slot)

    try:
        sys.stdin = open(os.devnull)  # noqa: SIM115
    except OSError:
        pass
    try:
        import faulthandler

        faulthandler.disable()   # a crashing kernel is reported by the parent, not dumped
    except Exception:
        pass
    try:
        _execute(task, checks, seed, timeout, fuzz, emit, context_options)
        emit(("done", None))
    except BaseException as exc:  # noqa: BLE001
        emit(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"))
    finally:
        conn.close()


def _task_name(task: Task) -> str:
    if task.name:
        return task.name
    if task.kind == "test":
        return task.test.name
    if task.kind == "case":
        return task.case.name
    return "fuzz"


def _crash_message(exitcode) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process crashed ({name})"
    return f"the worker process exited with status {exitcode}"


def _can_fork() -> bool:
    return can_fork()


def run_tasks(tasks: list[Task], checks=None, seed: int = DEFAULT_SEED,
              timeout: float | None = DEFAULT_TIMEOUT, jobs: int = 1, isolate: bool = True,
              fuzz: int = 0, on_task_done=None, context_options=None, xdist: bool = False,
              op_modules=None, test_paths=None) -> dict[int, list]:
    """Run tasks; {task index: [CheckResult, ...]}. `on_task_done(index)` after each.

    `xdist=True` (with `isolate` and `jobs` > 1, pytest-xdist importable, OpTest/fuzz tasks
    only) runs them on pytest-xdist workers, which load `op_modules` (as `--ops`) and
    discover `test_paths` (default: the tasks' test files); whatever that run does not bring
    back runs in the fork pool."""
    context_options = dict(context_options or {})
    if xdist and isolate and jobs > 1 and len(tasks) > 1:
        done = _run_xdist(tasks, checks, seed, timeout, jobs, fuzz, on_task_done,
                          context_options, op_modules, test_paths)
        if done is not None:
            return done
    out: dict[int, list] = {}
    if not isolate or not _can_fork():
        for i, task in enumerate(tasks):
            got: list = []

            def emit(msg, got=got):
                if msg[0] == "results":
                    got.extend(msg[1])

            try:
                _execute(task, checks, seed, timeout, fuzz, emit, context_options)
            except Exception as exc:  # noqa: BLE001
                got.append(CheckResult("output", FAIL, "", "", _task_name(task),
                                       f"the harness failed: {type(exc).__name__}: {exc}"))
            out[i] = got
            if on_task_done:
                on_task_done(i)
        return out

    preload(checks, fuzz)
    import gc

    # objects that exist now are never collected in the workers: freezing them keeps each
    # forked worker's garbage collector from touching (and so copying) the parent's pages
    gc.collect()
    gc.freeze()
    exiting: list = []
    ctx = multiprocessing.get_context("fork")
    n_checks = max(1, len(_selected_specs(checks)))
    backstop = None if not timeout else timeout * (n_checks + 2) + 10
    pending = list(enumerate(tasks))
    running = {}   # conn -> (index, process, started, current check, slot)
    jobs = max(1, int(jobs or 1))
    free_slots = [ctx.Array("c", 96, lock=False) for _ in range(min(jobs, len(tasks)) or 1)]
    from multiprocessing.connection import wait

    while pending or running:
        exiting = [p for p in exiting if p.exitcode is None]   # exitcode polls (reaps)
        while pending and len(running) < jobs:
            i, task = pending.pop(0)
            parent, child = ctx.Pipe(duplex=False)
            slot = free_slots.pop()
            slot.value = b""
            proc = ctx.Process(target=_worker, args=(child, task, checks, seed, timeout, fuzz,
                                                     context_options, slot), daemon=True)
            proc.start()
            child.close()
            out[i] = []
            running[parent] = [i, proc, time.monotonic(), None, slot]
        ready = wait(list(running), timeout=0.5)
        for conn in ready:
            i, proc, started, current, slot = running[conn]
            current = current or slot.value.decode(errors="replace") or None
            finished = False
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                proc.join(5)
                out[i].append(CheckResult(current or "output", FAIL, "", "",
                                          _task_name(tasks[i]),
                                          f"{_crash_message(proc.exitcode)} while running "
                                          f"check '{current or '?'}'", kind=Crashed.kind))
                finished = True
            else:
                if msg[0] == "start":
                    running[conn][3] = msg[1]
                elif msg[0] == "results":
                    out[i].extend(msg[1])
                    running[conn][3] = None
                elif msg[0] == "error":
                    out[i].append(CheckResult(current or "output", FAIL, "", "",
                                              _task_name(tasks[i]),
                                              f"the harness failed: {msg[1].splitlines()[0]}"))
                    finished = True
                elif msg[0] == "done":
                    finished = True
            if finished:
                exiting.append(proc)     # reaped below: its exit need not hold the slot
                conn.close()
                free_slots.append(slot)
                del running[conn]
                if on_task_done:
                    on_task_done(i)
        now = time.monotonic()
        for conn, (i, proc, started, current, slot) in list(running.items()):
            current = current or slot.value.decode(errors="replace") or None
            if backstop and now - started > backstop:
                proc.kill()
                proc.join(5)
                out[i].append(CheckResult(current or "output", FAIL, "", "",
                                          _task_name(tasks[i]),
                                          f"timed out after {now - started:.0f}s (killed) "
                                          f"while running check '{current or '?'}'",
                                          kind=TimedOut.kind))
                conn.close()
                free_slots.append(slot)
                del running[conn]
                if on_task_done:
                    on_task_done(i)
    for proc in exiting:
        proc.join(5)
    gc.unfreeze()
    return out


def preload(checks=None, fuzz: int = 0) -> None:
    """Import, once in this process, every module that the forked workers would import
    lazily (the checks, the variants, the gradient engine; hypothesis when fuzzing): each
    worker otherwise loads them again, and without cached bytecode (PYTHONDONTWRITEBYTECODE)
    compiles them again -- measured as a third of the workers' time on `--all`."""
    import pkgutil

    _selected_specs(checks)        # imports every selected check's module
    names = ["harness.gradient", "harness.lod_cases", "harness.pipeline", "harness.kinks",
             "harness.checks.optest", "harness.checks.output", "harness.checks.grad",
             "harness.checks.siblings"]
    import harness.variants as variants

    names += [f"harness.variants.{m.name}" for m in pkgutil.iter_modules(variants.__path__)]
    if fuzz:
        names += ["harness.fuzz", "harness.strategies", "hypothesis.extra.numpy", "numpy.ma",
                  "hypothesis.strategies._internal.flatmapped"]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the worker that needs it reports it
            pass
    if fuzz:
        try:
            from harness.fuzz import prepare_hypothesis

            prepare_hypothesis()
        except Exception:  # noqa: BLE001 - fuzzing itself reports a broken hypothesis
            pass


def _run_xdist(tasks, checks, seed, timeout, jobs, fuzz, on_task_done, context_options,
               op_modules, test_paths) -> dict[int, list] | None:
    """The tasks through pytest-xdist (None: cannot; run them in the fork pool)."""
    from harness import xdist_runner

    if not xdist_runner.available():
        return None
    try:
        done = xdist_runner.run_tasks_xdist(
            tasks, checks, seed, timeout, jobs, fuzz, on_task_done, context_options,
            op_modules=op_modules, test_paths=test_paths, log=sys.stderr)
    except xdist_runner.XdistUnavailable:
        return None
    left = [i for i in range(len(tasks)) if i not in done]
    if left:
        print(f"opkit test: running the {len(left)} remaining case(s) in the fork pool",
              file=sys.stderr)

        def finished(k):
            if on_task_done:
                on_task_done(left[k])

        rest = run_tasks([tasks[i] for i in left], checks, seed, timeout, jobs, True, fuzz,
                         finished, context_options)
        for k, i in enumerate(left):
            done[i] = rest.get(k, [])
    return done


def op_level_checks(checks=None) -> list[str]:
    """The selected checks that run once per op over all its OpTests (a Check with an
    `op_results(op, tests, context)` method, e.g. `state`) when cases run in forked
    workers: one task per op instead of one verdict per case."""
    if not _can_fork():
        return []
    return [s.name for s in _selected_specs(checks)
            if callable(getattr(s, "op_results", None))]


def plan(ops: list[str], discovered: dict[str, list[DiscoveredTest]], fuzz: int = 0,
         checks=None, op_level=()) -> tuple[list[Task], dict[str, str]]:
    """Tasks for the ops (one per OpTest class, one per op-level check and op (`op_level`:
    their names, see `op_level_checks`; the cases' workers must then be told to leave those
    checks out: `context_options["op_level"]`, as run_ops does), plus one fuzz task per op
    with --fuzz), and {op: reason} for ops that have no OpTest."""
    tasks, missing = [], {}
    for op in ops:
        tests = discovered.get(op, [])
        if not tests:
            missing[op] = f"no OpTest found for op '{op}'"
            continue
        for k, t in enumerate(tests):
            tasks.append(Task(op, "test", test=t, first_case=(k == 0)))
        for name in op_level:
            tasks.append(Task(op, "op", tests=tests, name=f"{name}({op})", check=name))
        if fuzz:
            tasks.append(Task(op, "fuzz", tests=tests, name=f"fuzz({op})"))
    return tasks, missing


def run_ops(ops: list[str], discovered: dict[str, list[DiscoveredTest]], checks=None,
            seed: int = DEFAULT_SEED, timeout: float | None = DEFAULT_TIMEOUT, jobs: int = 1,
            isolate: bool = True, fuzz: int = 0, progress=None,
            context_options=None, xdist: bool = False, op_modules=None,
            test_paths=None) -> list[OpReport]:
    """One OpReport per op, in the order given. `xdist`, `op_modules`, `test_paths`: as
    `run_tasks`."""
    op_level = op_level_checks(checks) if isolate else []
    tasks, missing = plan(ops, discovered, fuzz, checks, op_level)
    if op_level:          # the cases' workers leave those checks to the op tasks
        context_options = dict(context_options or {}, op_level=tuple(op_level))
    batch = None
    if checks is None or "determinism" in checks:
        # determinism across processes: ONE pair of fresh interpreters for the whole run,
        # working in the background while the cases run (harness.checks.hashseed)
        from harness.checks.hashseed import start_batch

        batch = start_batch([op for op in ops if op not in missing], discovered, seed,
                            timeout)
        if batch is not None:
            context_options = dict(context_options or {}, hash_seeds="batch")
    try:
        done = run_tasks(tasks, checks, seed, timeout, jobs, isolate, fuzz,
                         on_task_done=progress, context_options=context_options, xdist=xdist,
                         op_modules=op_modules, test_paths=test_paths)
    except BaseException:
        if batch is not None:
            batch.close()
        raise
    reports = {op: OpReport(op) for op in ops}
    for i, task in enumerate(tasks):
        rep = reports[task.op]
        rep.results.extend(done.get(i, []))
        if task.kind != "op":
            rep.cases.append(_task_name(task))
    if batch is not None:
        for op, results in batch.results(list(reports.values())).items():
            reports[op].results.extend(results)
    for op, reason in missing.items():
        reports[op].note = reason
        reports[op].results.append(CheckResult("output", SKIP, "", "", "", reason))
    return [reports[op] for op in ops]


# public names of the helpers the xdist runner shares with the fork pool
selected_specs = _selected_specs
execute_task = _execute
task_name = _task_name
crash_message = _crash_message
