"""`trace` (law 4 of issue 36): the op leaves no trace in process state (random streams,
environment, cwd, error modes, warning filters, threads, files: the judged run works in a
private working and temp directory, so only the op's own files count) and, with OPKIT_LAWS_DEEP=1,
memory does not grow over calls and time scales as declared (docs/harness.md, "Laws every op
obeys")."""
from __future__ import annotations

import contextlib
import gc
import os
import random
import shutil
import tempfile
import threading
import tracemalloc
import warnings

import numpy as np

from harness.checks.laws import shared as laws
from harness.backend.case import case_inputs
from harness.checks.base import Check, Mismatch
from harness.reporting.messages import rel, skip_prefixes
from harness.backend.seam import prepare, run_forward_backward

WARM, WINDOW = 20, 10      # untraced calls first: caches (numpy's, the op's) fill up
FRAMES = 16
LEAK_BYTES = 64


class TraceCheck(Check):
    name = "trace"
    description = ("no global state (random streams, env, cwd, error state, warning filters, "
                   "threads, files) changed by a run; memory not growing over calls")
    order = 154
    scope = "op"

    def verdict(self, derived, context):
        case = derived.case
        combo = laws.numeric_combo(case)
        saved = _snapshot()
        try:
            try:
                call = _caller(case, combo)
                call()                               # the warm-up
            except Exception:  # noqa: BLE001 - the case itself: `output` judges it
                return [self.skipped(case, "the case does not run on CPU")]
            _restore(saved)
            # the run gets a working directory and a temp directory of its own: what appears
            # there is the op's (another process working in the user's folder, a second
            # `opkit test` there, makes files too, and those are not this op's)
            private = tempfile.mkdtemp(prefix="opkit-trace-")
            try:
                os.mkdir(os.path.join(private, "cwd"))
                os.mkdir(os.path.join(private, "tmp"))
                os.chdir(os.path.join(private, "cwd"))
                base = _baseline(saved)
                threads = set(threading.enumerate())
                tempfile.tempdir = os.path.join(private, "tmp")
                writes: list = []
                try:
                    with _recording_environ(writes):
                        call()
                except Exception:  # noqa: BLE001
                    return [self.skipped(case, "the second run raised: see `determinism`")]
                finally:
                    tempfile.tempdir = saved["tempdir"]
                after = {**_snapshot(), "env_writes": writes,
                         "tmp_files": _listing(os.path.join(private, "tmp"))}
            finally:
                _restore(saved)                  # the user's working directory again
                shutil.rmtree(private, ignore_errors=True)
            started = [t for t in threading.enumerate() if t not in threads and t.is_alive()]
            problems = _differences(base, after)
            if started:
                problems.append(f"{len(started)} thread(s) started by the run still alive "
                                f"after it ({', '.join(t.name for t in started[:3])})")
            if problems:
                return [self.failed(derived, combo, "a run of the op changed process state "
                                    "a user relies on: " + "; ".join(problems), kind=Mismatch)]
            _restore(saved)
            if not laws.deep():
                return [self.passed(derived, combo, "no trace: state unchanged (memory growth: "
                                    "OPKIT_LAWS_DEEP=1)")]
            grew = _memory_growth(call)
            if grew:
                return [self.failed(derived, combo, grew, kind=Mismatch)]
            _restore(saved)
            from harness.checks.laws.scaling import scaling_problem

            superlinear, note = scaling_problem(case, combo)
            if superlinear:
                return [self.failed(derived, combo, superlinear, kind=Mismatch)]
            return [self.passed(derived, combo, "no trace: state unchanged, memory flat over "
                                f"{WARM + 2 * WINDOW} calls; {note}")]
        finally:
            _restore(saved)


def _caller(case, combo):
    prepared = prepare(case, combo)

    def call():
        prepared.reset(case_inputs(case, combo.dtype))
        run_forward_backward(prepared, case)

    return call


def _listing(path: str) -> frozenset:
    try:
        return frozenset(os.listdir(path))
    except OSError:
        return frozenset()


def _snapshot() -> dict:
    return {"np_random": np.random.get_state(), "py_random": random.getstate(),
            "environ": dict(os.environ), "cwd": os.getcwd(), "geterr": np.geterr(),
            "errcall": np.geterrcall(),
            "filters": list(warnings.filters), "cwd_files": _listing(os.getcwd()),
            "tmp_files": frozenset(), "tempdir": tempfile.tempdir}


def _restore(s: dict) -> None:
    np.random.set_state(s["np_random"])
    random.setstate(s["py_random"])
    now = dict(os.environ)
    for k in [k for k in now if k not in s["environ"]]:
        del os.environ[k]
    for k, v in s["environ"].items():
        if now.get(k) != v:
            os.environ[k] = v
    if os.getcwd() != s["cwd"]:
        os.chdir(s["cwd"])
    np.seterr(**s["geterr"])
    np.seterrcall(s["errcall"])
    warnings.filters[:] = s["filters"]
    warnings._filters_mutated()   # noqa: SLF001 - what warnings.simplefilter itself calls


class _Sentinel(Warning):
    """The warning category of the filter `trace` puts first while the op runs: a filter the
    run adds lands before it, so the list changes even when the same filter was there."""


class _Sink:
    def write(self, msg):   # np.seterrcall's log target while the op runs
        pass


SEED = 20240611


def _baseline(saved: dict) -> dict:
    """Set the check's own values (its seed, every numpy error mode "log", a sentinel
    warning filter first) so that a run that sets any of them again shows, even when an
    earlier run of the same op left the process that way; the snapshot of that state."""
    np.random.seed(SEED)
    random.seed(SEED)
    np.seterrcall(_Sink())
    np.seterr(all="log")
    warnings.filters[:] = [("ignore", None, _Sentinel, None, 0)] + list(saved["filters"])
    warnings._filters_mutated()   # noqa: SLF001 - what warnings.simplefilter itself calls
    return _snapshot()


@contextlib.contextmanager
def _recording_environ(writes: list):
    """Records every os.environ[key] = value / del os.environ[key] while it is active."""
    cls = type(os.environ)
    set_, delete = cls.__setitem__, cls.__delitem__

    def setitem(env, key, value):
        writes.append((key, value))
        set_(env, key, value)

    def delitem(env, key):
        writes.append((key, None))
        delete(env, key)

    cls.__setitem__, cls.__delitem__ = setitem, delitem
    try:
        yield
    finally:
        cls.__setitem__, cls.__delitem__ = set_, delete


def _same_np_random(a, b) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and tuple(a[2:]) == tuple(b[2:])


def _differences(before: dict, after: dict) -> list[str]:
    out = []
    if not _same_np_random(before["np_random"], after["np_random"]):
        out.append("numpy's global random state (np.random.get_state()) changed: the user's "
                   "stream was reseeded or drawn from (use np.random.default_rng)")
    if before["py_random"] != after["py_random"]:
        out.append("Python's global random state (random.getstate()) changed")
    env_b, env_a = before["environ"], after["environ"]
    changed = sorted(k for k in set(env_b) | set(env_a) if env_b.get(k) != env_a.get(k))
    if after.get("env_writes"):
        k, v = after["env_writes"][0]
        out.append(f"the run wrote os.environ[{k!r}] = {v!r}" if v is not None else
                   f"the run deleted os.environ[{k!r}]")
    elif changed:
        out.append(f"os.environ[{changed[0]!r}]: {env_b.get(changed[0])!r} before, "
                   f"{env_a.get(changed[0])!r} after"
                   + (f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""))
    if before["cwd"] != after["cwd"]:
        out.append(f"the working directory: {before['cwd']} before, {after['cwd']} after")
    if before["geterr"] != after["geterr"]:
        diff = {k: (before["geterr"][k], v) for k, v in after["geterr"].items()
                if before["geterr"].get(k) != v}
        out.append("numpy's floating-point error handling (np.geterr()): " + ", ".join(
            f"{k} {a!r} before, {b!r} after" for k, (a, b) in diff.items())
            + " (use `with np.errstate(...)`)")
    if before["filters"] != after["filters"]:
        new = [f for f in after["filters"] if f not in before["filters"]]
        out.append(f"the warning filters (warnings.filters) changed: {len(new)} added, first "
                   f"{new[0][:2] if new else '-'} (use `with warnings.catch_warnings()`)")
    for key, where in (("cwd_files", "the working directory"),
                       ("tmp_files", "the temp directory")):
        new = sorted(after[key] - before[key])
        if new:
            out.append(f"new file(s) left in {where}: {', '.join(new[:3])}")
    return out


def _memory_growth(call) -> str | None:
    """The message naming a line of user code (`harness.reporting.messages.skip_prefixes` tells it from
    numpy's, the framework's, the harness's) whose live allocations grow by one or more per
    call in both windows of WINDOW calls after WARM calls; None when there is none."""
    for _ in range(WARM):
        call()
    was = tracemalloc.is_tracing()
    if not was:
        tracemalloc.start(FRAMES)
    try:
        snaps = []
        for i in range(3):
            gc.collect()
            snaps.append(tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.DomainFilter(True, np.lib.tracemalloc_domain)]))
            if i < 2:
                for _ in range(WINDOW):
                    call()
    finally:
        if not was:
            tracemalloc.stop()
    first, second = _by_user_line(snaps[1], snaps[0]), _by_user_line(snaps[2], snaps[1])
    for where, (n1, b1) in first.items():
        n2, b2 = second.get(where, (0, 0))
        per_call = (b1 + b2) / (2 * WINDOW)
        if n1 >= WINDOW and n2 >= WINDOW and per_call >= LEAK_BYTES:
            return (f"memory grows with every call: {where} keeps {n1} more blocks ({b1} "
                    f"bytes) alive after calls {WARM + 1}-{WARM + WINDOW} and {n2} more ({b2} "
                    f"bytes) after the next {WINDOW}, after gc.collect() (about "
                    f"{per_call:.0f} bytes per call): something keeps every call's data alive")
    return None


def _by_user_line(new, old) -> dict:
    """{"file:line" of the innermost user frame: (count growth, size growth)}."""
    skip = skip_prefixes()
    out: dict[str, tuple] = {}
    for st in new.compare_to(old, "traceback"):
        if st.count_diff <= 0:
            continue
        frame = next((f for f in reversed(st.traceback)
                      if not os.path.realpath(f.filename).startswith(skip)), None)
        if frame is not None:
            key = f"{rel(frame.filename)}:{frame.lineno}"
            n, size = out.get(key, (0, 0))
            out[key] = (n + st.count_diff, size + st.size_diff)
    return out


CHECK = TraceCheck()
