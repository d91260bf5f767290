"""The one fork primitive of the harness: whether this process may fork (`can_fork`: not
without os.fork, not after CUDA was initialised) and running a function in a forked child
(`in_fork`). The fork pool, the zygote and the state check use it; a new interpreter, not a
fork, is harness.processes.fresh. Every child the harness makes calls `die_with_parent` first: no
process outlives the run that started it (docs/harness.md, "Child processes").
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time

__all__ = ["can_fork", "in_fork", "die_with_parent"]

_PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.2          # the portable fallback's poll of the parent


def _pdeathsig() -> bool:
    """Linux: the kernel sends this process SIGKILL when its parent dies. False elsewhere
    (or where prctl cannot be called)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(WATCH_SECONDS)
    os._exit(1)


def die_with_parent(parent_pid: int | None) -> None:
    """Called first in a child process: it ends when its parent (`parent_pid`, the pid the
    parent had before it forked or spawned this child) dies, however that parent died
    (SIGTERM, SIGKILL, a CI cancel). On Linux the kernel kills it (prctl PR_SET_PDEATHSIG),
    and a parent that died before this call (the race after fork) ends it at once;
    elsewhere a daemon thread polls the parent every WATCH_SECONDS. A child of the
    thread that forked it: on Linux the signal comes when that *thread* ends, so the harness
    forks only from threads that outlive their children."""
    if not parent_pid:
        return
    armed = _pdeathsig()
    if os.getppid() != parent_pid:          # the parent is already gone
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch, args=(parent_pid,), daemon=True,
                         name="opkit-parent-watch").start()


def can_fork() -> bool:
    if not hasattr(os, "fork") or "fork" not in multiprocessing.get_all_start_methods():
        return False
    # a process that already initialised CUDA must not fork (the child's CUDA is unusable)
    try:
        from opkit.framework.device import DeviceContextPool

        return not any(p.kind == "GPU" for p in DeviceContextPool.places_in_use())
    except Exception:  # noqa: BLE001 - no device layer: CPU only
        return True


def in_fork(fn):
    """fn() run in a forked child; its (picklable) return value, or raises RuntimeError."""
    r, w = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:                      # the child
        die_with_parent(parent)
        os.close(r)
        code = 0
        try:
            data = pickle.dumps(("ok", fn()))
        except BaseException as exc:  # noqa: BLE001
            data = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
            code = 1
        try:
            with os.fdopen(w, "wb") as f:
                f.write(data)
        finally:
            os._exit(code)
    os.close(w)
    try:
        with os.fdopen(r, "rb") as f:
            data = f.read()
    except BaseException:            # e.g. the check's time limit: the child must not outlive
        with contextlib.suppress(OSError):       # it (a hung kernel would keep running)
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("the forked process died without a result")
    status, value = pickle.loads(data)
    if status != "ok":
        raise RuntimeError(value)
    return value
