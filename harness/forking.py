"""The one fork primitive of the harness: whether this process may fork (`can_fork`: not
without os.fork, not after CUDA was initialised) and running a function in a forked child
(`in_fork`). The fork pool, the zygote and the state check use it; a new interpreter, not a
fork, is harness.fresh.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal

__all__ = ["can_fork", "in_fork"]


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
    pid = os.fork()
    if pid == 0:                      # the child
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
