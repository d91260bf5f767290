"""`opkit test --jobs N` through pytest-xdist: one pytest item per task, N xdist workers.

`run_tasks_xdist` (called by `harness.run.run_tasks(..., xdist=True)`) writes the task list
as JSON into a temporary folder and runs `pytest.main` in this process with `-n N` and this
module as a plugin (`-p harness.xdist_runner`). Every xdist worker (a fresh process, started
by execnet, not forked) rebuilds the same state as `opkit test`: it loads the same op
modules (`--ops`), discovers the same test paths with the same seed, and turns the JSON
spec back into `harness.run.Task`s. Each task is one pytest item; its `runtest` runs the
task exactly as the fork pool does (`run_tasks([task], jobs=1)`: a forked child per case,
the per-check SIGALRM limit and the parent's kill backstop, the same crash messages) and
attaches the CheckResults as JSON to `item.user_properties`. The controller (this process)
reads them in `pytest_runtest_logreport` back into `{task index: [CheckResult, ...]}`, the
structure `run_tasks` returns, so the table/JSON is the same as the fork pool's.

Where a worker cannot fork (it initialised CUDA) the case runs inside the worker: a raise or
a Python-level hang is still a failed check (try/except, SIGALRM); a crash takes the worker
down and xdist reports "worker crashed" (and starts a new worker), which becomes a failed
check naming the crash, its signal and the check that was running (the worker writes the
current check to a status file); a hang that ignores signals is cut by a faulthandler
watchdog (`exit=True`) after the same backstop as the fork pool's and reported as
"timed out ... (killed)".

pytest's own output never reaches standard output: it is captured and shown on standard
error only when the xdist run itself fails, in which case `run_tasks` finishes the tasks
left over in its fork pool.
"""
from __future__ import annotations

from harness.options import DEFAULT_SEED  # noqa: I001

import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path

import pytest

__all__ = ["available", "run_tasks_xdist", "XdistUnavailable", "SPEC_NAME"]

SPEC_NAME = "opkit-xdist-tasks.json"
_PROP = "opkit_results"


class XdistUnavailable(Exception):
    """The tasks cannot go through xdist (a case task, options that are not JSON...)."""


def available() -> bool:
    """pytest-xdist is importable."""
    try:
        import xdist  # noqa: F401
        import xdist.plugin  # noqa: F401
    except Exception:
        return False
    return True


# -- the spec: tasks and run options as JSON -----------------------------------------------
def _task_json(task) -> dict:
    if task.kind == "test":
        return {"op": task.op, "kind": "test", "name": task.name, "first_case": task.first_case,
                "tests": [[task.test.path, task.test.name]]}
    if task.kind in ("fuzz", "op"):
        return {"op": task.op, "kind": task.kind, "name": task.name, "check": task.check,
                "first_case": task.first_case, "tests": [[t.path, t.name] for t in task.tests]}
    raise XdistUnavailable(f"a '{task.kind}' task cannot be sent to an xdist worker")


def _spec(tasks, checks, seed, timeout, fuzz, context_options, op_modules, test_paths,
          fork_cases) -> dict:
    from harness import settings

    if test_paths is None:     # the files the tasks' OpTests come from, in order
        test_paths = list(dict.fromkeys(p for t in tasks for p, _ in _task_json(t)["tests"]))
    spec = {
        "cwd": os.getcwd(),
        "tasks": [_task_json(t) for t in tasks],
        "checks": list(checks) if checks is not None else None,
        "seed": seed, "timeout": timeout, "fuzz": fuzz,
        "context_options": dict(context_options or {}),
        "op_modules": [str(m) for m in (op_modules or [])],
        "test_paths": [str(p) for p in test_paths],
        "places": ",".join(settings.selected_places()),
        "place_option": settings.place_option().split(" / ")[0],
        "dtypes": ",".join(settings.selected_dtypes()),
        "fork_cases": bool(fork_cases),
    }
    try:
        json.dumps(spec)
    except (TypeError, ValueError) as exc:
        raise XdistUnavailable(f"the run options are not JSON: {exc}") from None
    return spec


def _node_name(i: int, task: dict) -> str:
    label = f"{task['op']}-{task['name'] or task['tests'][0][1]}"
    return f"t{i:05d}[{''.join(c if c.isalnum() or c in '_-.' else '_' for c in label)}]"


def _result_json(r) -> dict:
    data = r.to_json()
    for key, value in data.items():
        if hasattr(value, "item") and not isinstance(value, (str, bytes)):
            data[key] = value.item()      # numpy scalars
    return data


def _backstop(timeout, checks) -> float | None:
    from harness.run import selected_specs as _selected_specs

    n_checks = max(1, len(_selected_specs(checks)))
    return None if not timeout else timeout * (n_checks + 2) + 10


# -- worker side ---------------------------------------------------------------------------
class _WorkerState:
    def __init__(self, spec: dict):
        self.spec = spec
        self.error = ""
        self.tests = {}
        try:
            self._load()
        except BaseException as exc:  # noqa: BLE001 - every item reports it
            if isinstance(exc, KeyboardInterrupt):
                raise
            self.error = f"{type(exc).__name__}: {exc}"

    def _load(self):
        spec = self.spec
        os.chdir(spec["cwd"])
        from harness import settings

        settings.configure(spec["places"], spec["dtypes"])
        settings.set_place_option(spec.get("place_option", "OPKIT_PLACE"))
        from opkit.project import load_op_modules

        load_op_modules(spec["op_modules"])
        from harness.discovery import discover

        found = discover(spec["test_paths"], seed=spec["seed"]) if spec["test_paths"] else None
        for t in (found.tests if found else []):
            self.tests[(t.path, t.name)] = t

    def task(self, index: int):
        from harness.run import Task

        data = self.spec["tasks"][index]
        tests = []
        for path, name in data["tests"]:
            t = self.tests.get((path, name))
            if t is None:
                raise LookupError(f"the xdist worker did not rediscover {path}::{name}")
            tests.append(t)
        if data["kind"] == "test":
            return Task(data["op"], "test", test=tests[0], first_case=data["first_case"],
                        name=data["name"])
        return Task(data["op"], data["kind"], tests=tests, first_case=data["first_case"],
                    name=data["name"], check=data.get("check", ""))


_STATE: dict = {}


def _worker_state(path: Path) -> _WorkerState:
    key = str(path)
    if key not in _STATE:
        _STATE[key] = _WorkerState(json.loads(path.read_text(encoding="utf-8")))
    return _STATE[key]


def _worker_id() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def _run_in_worker(spec_path: Path, index: int) -> list:
    from harness.report import FAIL, CheckResult
    from harness.forking import can_fork as _can_fork
    from harness.run import execute_task as _execute
    from harness.run import run_tasks
    from harness.run import task_name as _task_name

    state = _worker_state(spec_path)
    spec = state.spec
    if state.error:
        name = spec["tasks"][index]["name"] or spec["tasks"][index]["tests"][0][1]
        return [CheckResult("output", FAIL, "", "", name,
                            f"the harness failed: the xdist worker could not load the ops "
                            f"or tests: {state.error}")]
    task = state.task(index)
    args = (spec["checks"], spec["seed"], spec["timeout"])
    if spec["fork_cases"] and _can_fork():
        return run_tasks([task], *args, jobs=1, isolate=True, fuzz=spec["fuzz"],
                         context_options=spec["context_options"])[0]

    # in this worker: a crash takes the worker down (xdist reports it, the controller names
    # the check from the status file); a hang that ignores SIGALRM is cut by faulthandler
    import faulthandler

    folder = spec_path.parent
    status = folder / f"status-{_worker_id()}.json"
    got: list = []

    def emit(msg):
        if msg[0] == "start":
            status.write_text(json.dumps({"index": index, "check": msg[1]}), encoding="utf-8")
        elif msg[0] == "results":
            got.extend(msg[1])

    status.write_text(json.dumps({"index": index, "check": None}), encoding="utf-8")
    backstop = _backstop(spec["timeout"], spec["checks"])
    with open(folder / f"hang-{_worker_id()}.txt", "w", encoding="utf-8") as hang:
        if backstop:
            faulthandler.dump_traceback_later(backstop, exit=True, file=hang)
        try:
            _execute(task, *args, spec["fuzz"], emit, spec["context_options"])
        except Exception as exc:  # noqa: BLE001 - as run_tasks(isolate=False)
            got.append(CheckResult("output", FAIL, "", "", _task_name(task),
                                   f"the harness failed: {type(exc).__name__}: {exc}"))
        finally:
            if backstop:
                faulthandler.cancel_dump_traceback_later()
    return got


class TasksFile(pytest.File):
    def collect(self):
        spec = json.loads(self.path.read_text(encoding="utf-8"))
        for i, task in enumerate(spec["tasks"]):
            item = TaskItem.from_parent(self, name=_node_name(i, task))
            item.index = i
            yield item


class TaskItem(pytest.Item):
    index = 0

    def runtest(self):
        results = _run_in_worker(self.path, self.index)
        self.user_properties.append((_PROP, json.dumps([_result_json(r) for r in results])))

    def reportinfo(self):
        return self.path, None, self.name


def pytest_collect_file(file_path, parent):
    if file_path.name == SPEC_NAME:
        return TasksFile.from_parent(parent, path=file_path)
    return None


# -- controller side -----------------------------------------------------------------------
class _Collector:
    """Registered in the controller only: turns reports into CheckResults by task index."""

    def __init__(self, tasks, folder: Path, node_ids: dict, timeout, backstop, on_task_done):
        self.tasks = tasks
        self.folder = folder
        self.node_ids = node_ids
        self.timeout = timeout
        self.backstop = backstop
        self.on_task_done = on_task_done
        self.out: dict[int, list] = {}

    def _finish(self, i: int, results: list) -> None:
        if i in self.out:
            return
        self.out[i] = results
        if self.on_task_done:
            self.on_task_done(i)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report):
        from harness.report import FAIL, CheckResult
        from harness.run import task_name as _task_name

        i = self.node_ids.get(report.nodeid)
        if i is None or i in self.out:
            return
        name = _task_name(self.tasks[i])
        if report.when == "call":
            props = dict(report.user_properties)
            if report.passed and _PROP in props:
                self._finish(i, [CheckResult(**r) for r in json.loads(props[_PROP])])
            else:
                self._finish(i, [CheckResult("output", FAIL, "", "", name,
                                             f"the harness failed: {_last_line(report)}")])
        elif report.when == "???":          # xdist: the worker crashed running this item
            self._finish(i, [self._crash(i, name, report)])
        elif report.failed:                 # setup/teardown of the item itself
            self._finish(i, [CheckResult("output", FAIL, "", "", name,
                                         f"the harness failed: {_last_line(report)}")])

    def _crash(self, i, name, report):
        from harness.report import FAIL, CheckResult
        from harness.run import crash_message as _crash_message

        node = getattr(report, "node", None)
        worker = getattr(getattr(node, "gateway", None), "id", "") or "?"
        current = None
        try:
            status = json.loads((self.folder / f"status-{worker}.json").read_text("utf-8"))
            if status.get("index") == i:
                current = status.get("check")
        except (OSError, ValueError):
            pass
        hang = self.folder / f"hang-{worker}.txt"
        if self.backstop and hang.is_file() and hang.stat().st_size:
            return CheckResult(current or "output", FAIL, "", "", name,
                               f"timed out after {self.backstop:.0f}s (killed) while running "
                               f"check '{current or '?'}'")
        return CheckResult(current or "output", FAIL, "", "", name,
                           f"{_crash_message(_exit_code(node))} (xdist worker {worker}) "
                           f"while running check '{current or '?'}'")


def _exit_code(node):
    popen = getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None)
    if popen is None:
        return None
    try:
        return popen.wait(timeout=5)
    except Exception:
        return None


def _last_line(report) -> str:
    text = str(getattr(report, "longreprtext", "") or report.longrepr or "").strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ln.startswith("E "):
            return ln[1:].strip()
    return lines[-1] if lines else "unknown error"


@contextlib.contextmanager
def _environment(**values):
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_tasks_xdist(tasks, checks=None, seed: int = DEFAULT_SEED, timeout=None, jobs: int = 2,
                    fuzz: int = 0, on_task_done=None, context_options=None, op_modules=None,
                    test_paths=None, fork_cases: bool = True, log=None) -> dict[int, list]:
    """Run the tasks on `jobs` xdist workers; {task index: [CheckResult, ...]} for the tasks
    that came back (a task missing from it did not: the xdist run failed, see `log`).

    `op_modules` (as `--ops`) and `test_paths` (as `--tests`) are what the workers load and
    discover; by default no extra op modules and the tasks' own test files.
    Raises XdistUnavailable when the tasks cannot be described to a worker."""
    spec = _spec(tasks, checks, seed, timeout, fuzz, context_options, op_modules, test_paths,
                 fork_cases)
    if not tasks:
        return {}
    with tempfile.TemporaryDirectory(prefix="opkit-xdist-") as tmp:
        folder = Path(tmp)
        spec_path = folder / SPEC_NAME
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        node_ids = {f"{SPEC_NAME}::{_node_name(i, t)}": i for i, t in enumerate(spec["tasks"])}
        collector = _Collector(tasks, folder, node_ids, timeout, _backstop(timeout, checks),
                               on_task_done)
        workers = max(1, min(int(jobs), len(tasks)))
        args = [str(spec_path), "-c", str(folder / "pytest.ini"), "--rootdir", str(folder),
                "--basetemp", str(folder / "basetemp"),
                "-p", "xdist.plugin", "-p", "harness.xdist_runner",
                "-n", str(workers), "--dist", "load", "--max-worker-restart", str(len(tasks)),
                "-q", "-s", "--assert=plain", "-p", "no:cacheprovider", "-p", "no:warnings",
                "-p", "no:logging", "-p", "no:faulthandler"]
        buffer = io.StringIO()
        started = time.monotonic()
        with _environment(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTEST_ADDOPTS=None,
                          PYTEST_PLUGINS=None), contextlib.redirect_stdout(buffer):
            try:
                code = pytest.main(args, plugins=[collector])
            except Exception as exc:  # noqa: BLE001 - the fork pool takes over
                code = f"{type(exc).__name__}: {exc}"
        if code == pytest.ExitCode.INTERRUPTED and "KeyboardInterrupt" in buffer.getvalue():
            raise KeyboardInterrupt     # Ctrl-C: stop, as the fork pool does
        if log is not None and (code not in (0, 1) or len(collector.out) < len(tasks)):
            log.write(f"pytest-xdist run failed (exit {code}, {len(collector.out)} of "
                      f"{len(tasks)} tasks back after {time.monotonic() - started:.1f}s); "
                      f"pytest said:\n{buffer.getvalue()[-4000:]}\n")
    return collector.out

