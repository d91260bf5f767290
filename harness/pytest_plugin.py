"""pytest plugin of opkit (entry point `pytest11: opkit`): the `--opkit-*` options (their
help below; docs/harness.md, "pytest plugin"), the run's options built once from them, and
one item per harness check on every OpTest class (`Class::opkit[mutation]`), run as
`opkit test` runs them. `--opkit-NAME` (or OPKIT_NAME=1) turns on the compatibility mode
NAME of a plugin (an entry point of `opkit.compat`: Paddle's, docs/paddle.md),
`--opkit-backend` picks a backend (harness.backend.dispatch).
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import pytest

from harness import options as run_options
from harness.reporting.report import FAIL, SKIP, UNCONFIRMED, CheckResult
from harness.reporting.rootcause import one_line, same_cause
from harness.selecting.sharding import (
    ShardError,
    durations_problem,
    parse_shard,
    part,
    read_durations,
    write_durations,
)
from opkit.project import load_project

try:
    import fcntl        # POSIX only: the shared results of pytest-xdist's workers
except ImportError:
    fcntl = None

ITEM_PREFIX = "opkit"


def pytest_addoption(parser):
    group = parser.getgroup("opkit", "opkit op tests")
    group.addoption("--opkit-place", choices=["CPU", "GPU", "all", "cpu", "gpu"],
                    help="places OpTest checks run on: CPU, GPU or all (default all)")
    group.addoption("--opkit-dtype", choices=["float32", "float64", "all"],
                    help="float dtypes OpTest checks run: float32, float64 or all (default all)")
    from harness.backend.dispatch import compat_names

    for name in compat_names():      # each compatibility mode's switch: --opkit-paddle, ...
        group.addoption(f"--opkit-{name}", action="store_true", default=False,
                        dest=f"opkit_compat_{name}", help=f"the {name}-compatibility mode "
                        f"(also {run_options.compat_env(name)}=1): run {name}'s own OpTest "
                        "files unchanged")
    group.addoption("--opkit-backend",
                    help="whose kernels run the op: opkit's (default) or an installed "
                         "backend's: paddle, PaddlePaddle's CPU kernels (needs "
                         "opkit-dl[paddle]; also OPKIT_BACKEND)")
    group.addoption("--opkit-no-check-items", action="store_false", default=None,
                    dest="opkit_check_items",
                    help="do not add one item per harness check to each OpTest class")
    group.addoption("--opkit-check-items", action="store_true", default=None,
                    dest="opkit_check_items",
                    help="add them (the default; overrides an --opkit-no-check-items in "
                         "addopts, the last one given wins)")
    group.addoption("--opkit-shard", metavar="K/N",
                    help="run only part K of N of the tests (balanced by recorded durations)")
    group.addoption("--opkit-durations", metavar="FILE",
                    help="durations file for --opkit-shard / --opkit-record-durations")
    group.addoption("--opkit-record-durations", action="store_true", default=False,
                    help="write each op's (or test file's) run time to the durations file")


def pytest_configure(config):
    try:        # THE run's options, built once here (harness.options) for every item
        opts = run_options.Options.from_env(
            places=config.getoption("--opkit-place", default=None),
            dtypes=config.getoption("--opkit-dtype", default=None),
            place_option="--opkit-place",
            backend=config.getoption("--opkit-backend", default=None))
    except ValueError as exc:
        raise pytest.UsageError(f"opkit: {exc}") from None
    run_options.use(opts)
    from harness.backend.dispatch import activate, unavailable

    why = unavailable(opts.backend)     # the backend object's own answer (OPKIT_BACKEND too)
    if why:
        raise pytest.UsageError(f"opkit: --opkit-backend {opts.backend}: {why}")
    activate(opts.backend)
    for name, mode in _compat_asked(config):
        mode.activate(opts.backend)
        # a test file the mode cannot import is one collection error (naming the file and
        # the missing name); the other files still run
        config.option.continue_on_collection_errors = True
        pytest_hooks = mode.pytest_hooks()
        if not config.pluginmanager.is_registered(pytest_hooks):
            config.pluginmanager.register(pytest_hooks, f"opkit-{name}-hooks")
    run_options.set_place_option("--opkit-place")
    try:
        config._opkit_shard = parse_shard(config.getoption("--opkit-shard", default=None),
                                          "--opkit-shard")
    except ShardError as exc:
        raise pytest.UsageError(str(exc)) from None
    given = config.getoption("--opkit-durations", default=None)
    if given and config._opkit_shard and not Path(given).is_file() \
            and not config.getoption("--opkit-record-durations", default=False):
        raise pytest.UsageError(f"opkit: --opkit-durations: {given} does not exist (record it "
                                f"first with --opkit-record-durations)")
    if config.getoption("--opkit-record-durations", default=False) \
            and not hasattr(config, "workerinput"):
        problem = durations_problem(_durations(config))
        if problem:
            raise pytest.UsageError(f"opkit: --opkit-record-durations: cannot write the "
                                    f"durations file: {problem}")
    config._opkit_units = {}
    config._opkit_times = {}


def _compat_asked(config) -> list:
    """[(name, mode)] of the compatibility modes asked for: `--opkit-NAME` or OPKIT_NAME=1."""
    from harness.backend.dispatch import compat_mode, compat_names

    return [(name, compat_mode(name)) for name in compat_names()
            if config.getoption(f"opkit_compat_{name}", default=False) or
            run_options.flag(run_options.compat_env(name))]


def pytest_ignore_collect(collection_path, config):
    """In a compatibility mode, the framework's own harness files beside the tests (Paddle's
    op_test.py, ...) are not test files."""
    if any(mode.is_harness_file(collection_path) for _, mode in _compat_asked(config)):
        return True
    return None


def pytest_report_header(config):
    try:
        return (f"opkit: places {','.join(run_options.selected_places())}, dtypes "
                f"{','.join(run_options.selected_dtypes())}")
    except ValueError as exc:  # a bad OPKIT_PLACE / OPKIT_DTYPE
        return f"opkit: {exc}"


# -- the harness-check items --------------------------------------------------------------
def _is_optest(cls) -> bool:
    from harness.selecting.discovery import is_optest_class

    try:
        return is_optest_class(cls)
    except Exception:  # noqa: BLE001
        return False


class OpkitCheckItem(pytest.Item):
    """One harness check on one OpTest class (`Class::opkit[check]`)."""

    def __init__(self, *, optest, check, op, op_classes, **kwargs):
        super().__init__(**kwargs)
        self.optest, self.check, self.op, self.op_classes = optest, check, op, op_classes

    def runtest(self):
        results = _class_results(self.config, self.optest, self.op, self.op_classes)
        mine = [r for r in results if r.check == self.check]
        failed = [r for r in mine if r.status == FAIL]
        if failed:
            from harness.checks.catalog import check_names

            first = same_cause(results, check_names() + ["fuzz"]).get(self.check)
            raise OpkitCheckFailed(failed, same_as=first if first != self.check else None,
                                   op=self.op)
        unconfirmed = [r for r in mine if r.status == UNCONFIRMED]
        if unconfirmed:     # (harness.judging.unconfirmed): a pass with a warning
            warnings.warn(f"opkit {self.check}: {unconfirmed[0].message}", stacklevel=1)
        if not mine or all(r.status == SKIP for r in mine):
            reasons = "; ".join(list(dict.fromkeys(r.message for r in mine if r.message))[:3])
            raise pytest.skip.Exception(f"{self.check}: {reasons or 'nothing to check'}",
                                        _use_item_location=True)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, OpkitCheckFailed):
            return excinfo.value.text()
        return super().repr_failure(excinfo)

    def reportinfo(self):
        try:
            line = inspect.getsourcelines(self.optest)[1] - 1
        except (OSError, TypeError):
            line = 0
        return self.path, line, f"{self.optest.__name__}::{ITEM_PREFIX}[{self.check}]"


class OpkitCheckFailed(Exception):
    def __init__(self, results, same_as=None, op=None):
        super().__init__(results)
        self.results = results
        self.same_as = same_as      # the check reporting this root cause in full
        self.op = op                # names the kernel function in the block

    def text(self) -> str:
        from harness.backend.dispatch import kernel_functions
        from harness.reporting.messages import group_failures

        blocks = group_failures(self.results, op_type=self.op, kernels=kernel_functions)
        if self.same_as:            # one root cause, told in full once (harness.reporting.rootcause)
            return (f"the same root cause as opkit[{self.same_as}] (told in full there): "
                    f"{one_line(blocks[0]) if blocks else ''}")
        return "\n".join(blocks)


def _class_results(config, cls, op, op_classes):
    """Every check on the class, run once per test run: in this process, and under
    pytest-xdist once for all workers (the first worker to need it computes it under a file
    lock; the others read its results)."""
    cache = config.__dict__.setdefault("_opkit_results", {})
    if cls in cache:
        return cache[cls]
    shared = _shared_file(config, cls)
    if shared is None:
        cache[cls] = _compute(config, cls, op, op_classes)
        return cache[cls]
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if shared.is_file():
                results = [CheckResult(**d) for d in json.loads(shared.read_text())]
            else:
                results = _compute(config, cls, op, op_classes)
                tmp = shared.with_suffix(".tmp")
                tmp.write_text(json.dumps([r.to_json() for r in results]))
                tmp.replace(shared)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    cache[cls] = results
    return results


def _shared_file(config, cls):
    """Under pytest-xdist: the results file of `cls` shared by this run's workers."""
    workerinput = getattr(config, "workerinput", None)
    if not workerinput or "testrunuid" not in workerinput or fcntl is None:
        return None
    folder = workerinput.get("opkit_items_dir")     # made (and removed) by the controller
    folder = Path(folder) if folder else \
        Path(tempfile.gettempdir()) / f"opkit-items-{workerinput['testrunuid']}"
    folder.mkdir(exist_ok=True)
    key = hashlib.sha1(f"{cls.__module__}.{cls.__qualname__}:{run_options.current().seed}"
                       .encode()).hexdigest()[:16]
    return folder / f"{key}.json"


def _discovered(config, cls, op):
    """The DiscoveredTest of a collected OpTest class (its path relative to the rootdir)."""
    from harness.selecting.discovery import DiscoveredTest

    try:
        path = os.path.relpath(inspect.getsourcefile(cls) or "", config.rootpath)
    except (TypeError, ValueError):
        path = str(config.rootpath)
    return DiscoveredTest(cls, op, path)


def _compute(config, cls, op, op_classes):
    from harness.executing.in_process import run_test
    from harness.api import op_verdicts

    seed = run_options.current().seed
    first = op_classes[0] is cls
    results = _in_zygote(config, cls, op, op_classes, first, seed)
    if results is None:
        from harness.executing.fuzz import DEFAULT_FUZZ, fuzz_test

        results = run_test(_discovered(config, cls, op), seed=seed,
                           timeout=None, first_case=first, hash_seeds="own")
        if DEFAULT_FUZZ:
            results += fuzz_test(cls, DEFAULT_FUZZ, seed)
    if first:
        # the op-level verdicts come from what every class of the op ran (each class's
        # results are computed once and cached: this only runs them earlier)
        ran = list(results)
        for other in op_classes[1:]:
            ran += _class_results(config, other, op, op_classes)
        results += op_verdicts(op, op_classes, ran)
    return results


def _in_zygote(config, cls, op, op_classes, first, seed):
    """The class's checks as `opkit test` runs them: the same tasks, in workers of the pool
    forked from the process started before any test ran (harness.executing.zygote), the op-level
    checks (`state`) once per op over all its classes. None without a zygote (no fork): the
    caller runs them here."""
    zygote = getattr(config, "_opkit_zygote", None)
    if zygote is None:
        return None
    from harness.executing.pool import Task, op_level_checks

    op_level = tuple(op_level_checks())
    results = zygote.run(Task.of_test(op, _discovered(config, cls, op), first), seed,
                         context_options={"hash_seeds": "own", "op_level": op_level})
    if results is None:
        return None
    from harness.executing.fuzz import DEFAULT_FUZZ

    # the per-op tasks, once per op as in opkit test: the op-level checks, and fuzz with
    # opkit test's default budget; each class takes its own cases' results
    tests = [_discovered(config, c, op) for c in op_classes]
    per_op = [(check, Task.of_op_check(op, tests, check), 0) for check in op_level]
    if DEFAULT_FUZZ:
        per_op.append(("fuzz", Task.of_fuzz(op, tests), DEFAULT_FUZZ))
    done = config.__dict__.setdefault("_opkit_op_level", {})
    name = cls.__name__
    for key, task, fuzz in per_op:
        if (key, op) not in done:
            done[(key, op)] = zygote.run(task, seed, fuzz) or []
        results += [r for r in done[(key, op)] if r.case in (name, f"fuzz:{name}") or
                    r.case.startswith(name + "/")]
    return results


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The check items are children of their OpTest class, collected with its test methods:
    so `file::Class::opkit[grad]` selects one again, `-k mutation` and `--lf` see them, and
    "collected N items" counts them. A module's OpTest classes are grouped by op as the
    module is collected (what `first` and the op-level verdicts need)."""
    outcome = yield
    report = outcome.get_result()
    config = collector.config
    if report.outcome != "passed" or config.getoption("opkit_check_items") is False:
        return
    if isinstance(collector, pytest.Module):
        for node in report.result:
            cls = getattr(node, "obj", None) if isinstance(node, pytest.Class) else None
            if _is_optest(cls):
                _op_of(config, cls)
        return
    cls = getattr(collector, "obj", None) if isinstance(collector, pytest.Class) else None
    op = _op_of(config, cls) if _is_optest(cls) else None
    if not op:
        return
    # the id given as a string: pytest parses `opkit[grad]` as a name and its parameters,
    # as it does when it reads the id back (--lf, a node id on the command line)
    report.result.extend(
        OpkitCheckItem.from_parent(collector, name=f"{ITEM_PREFIX}[{check}]",
                                   nodeid=f"{collector.nodeid}::{ITEM_PREFIX}[{check}]",
                                   optest=cls, check=check, op=op,
                                   op_classes=config._opkit_by_op[op])
        for check in check_item_names())


def _op_of(config, cls) -> str | None:
    """The op of an OpTest class, found once; the classes of each op in collection order."""
    ops = config.__dict__.setdefault("_opkit_op_of", {})
    if cls not in ops:
        from harness.selecting.suite import op_type_of

        ops[cls] = op = op_type_of(cls, seed=run_options.DEFAULT_SEED)
        if op:
            config.__dict__.setdefault("_opkit_by_op", {}).setdefault(op, []).append(cls)
    return ops[cls]


def check_item_names() -> list[str]:
    """The checks that get an item per OpTest class (the harness's default checks)."""
    from harness.checks.catalog import all_checks
    from harness.executing.fuzz import DEFAULT_FUZZ

    return [spec.name for spec in all_checks() if spec.default] + \
        (["fuzz"] if DEFAULT_FUZZ else [])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    # the check items were collected with their class (pytest_make_collect_report)
    classes = list(dict.fromkeys(c for c in map(_item_class, items) if _is_optest(c)))
    ops = {cls: _op_of(config, cls) for cls in classes}

    unusable = run_options.unusable_selection()
    if unusable:
        mark = pytest.mark.skip(reason=unusable)
        for item in items:
            if isinstance(item, OpkitCheckItem) or _is_optest(getattr(item, "cls", None)):
                item.add_marker(mark)

    units = config._opkit_units = {
        item.nodeid: ops.get(_item_class(item)) or "file:" + item.nodeid.split("::")[0]
        for item in items}
    spec = config._opkit_shard
    if spec:
        chosen = set(part(sorted(set(units.values())), spec, read_durations(_durations(config))))
        keep = [it for it in items if units[it.nodeid] in chosen]
        dropped = [it for it in items if units[it.nodeid] not in chosen]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    if any(isinstance(it, OpkitCheckItem) for it in items) and classes and \
            getattr(config, "_opkit_zygote", None) is None:
        # before any test runs: the process the check items' workers are forked from
        from harness.executing.zygote import Zygote

        config._opkit_zygote = Zygote.start(classes)


def _item_class(item):
    return item.optest if isinstance(item, OpkitCheckItem) else getattr(item, "cls", None)


def _durations(config):
    given = config.getoption("--opkit-durations", default=None)
    if given:
        return Path(given)
    return load_project(config.rootpath).durations_path()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    started = time.monotonic()
    yield
    config = item.config
    if config.getoption("--opkit-record-durations", default=False):
        unit = getattr(config, "_opkit_units", {}).get(item.nodeid)
        if unit:
            config._opkit_times[unit] = config._opkit_times.get(unit, 0.0) + \
                time.monotonic() - started


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist, controller side: one shared-results folder for this run's workers, made
    here so the controller can remove it at the end."""
    config = node.config
    folder = getattr(config, "_opkit_items_dir", None)
    if folder is None:
        folder = config._opkit_items_dir = tempfile.mkdtemp(prefix="opkit-items-")
    node.workerinput["opkit_items_dir"] = folder


def pytest_sessionfinish(session):
    config = session.config
    zygote = getattr(config, "_opkit_zygote", None)
    if zygote is not None:
        zygote.close()
        config._opkit_zygote = None
    folder = getattr(config, "_opkit_items_dir", None)
    if folder and not hasattr(config, "workerinput"):      # the controller only
        shutil.rmtree(folder, ignore_errors=True)
        config._opkit_items_dir = None
    times = getattr(config, "_opkit_times", {})
    if config.getoption("--opkit-record-durations", default=False) and times:
        write_durations(_durations(config), times)
