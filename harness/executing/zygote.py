"""A pristine process for the pytest plugin: the fork pool (harness.executing.pool), forked at the end
of collection, before any test ran, so that a kernel keeping state between calls cannot
spoil the later OpTests' checks. Each request is a `harness.executing.pool.Task` (OpTest classes travel
as their ids), run as `opkit test` does. docs/harness.md "pytest plugin".
"""
from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
from dataclasses import replace

from harness.processes.forking import can_fork, die_with_parent
from harness.executing.pool import run_tasks

__all__ = ["Zygote"]


def _swap(task, cls_of):
    """The task with each OpTest class replaced by cls_of(class) (ids out, classes in)."""
    def one(t):
        return replace(t, cls=cls_of(t.cls))

    return replace(task, test=one(task.test) if task.test is not None else None,
                   tests=[one(t) for t in task.tests])


def _serve(conn, by_id: dict, parent_pid: int | None = None, other_end=None) -> None:
    """The zygote's loop: one task at a time, each in a worker of the pool forked from
    here; it never runs a kernel itself. It dies with the process that started it (pytest
    killed by TERM or KILL), and its workers with it. `other_end` (the parent's end of the
    pipe, which the fork copied) is closed first: else the zygote would hold both ends,
    never read EOF when its parent dies, and outlive it (holding the parent's captured
    stdout open)."""
    die_with_parent(parent_pid)
    if other_end is not None:
        other_end.close()
    while True:
        request = None
        with contextlib.suppress(EOFError, OSError):
            request = conn.recv()
        if request is None:
            return
        task, seed, fuzz, context_options = request
        try:
            done = run_tasks([_swap(task, by_id.__getitem__)], None, seed, None, 1, True,
                             fuzz, context_options=context_options)
            conn.send(("ok", done.get(0, [])))
        except BaseException as exc:  # noqa: BLE001 - the plugin falls back in-process
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class Zygote:
    def __init__(self, process, conn, known):
        self.process, self.conn, self.known = process, conn, known

    @classmethod
    def start(cls, classes) -> Zygote | None:
        """`classes`: the collected OpTest classes. None where forking is not safe."""
        if not can_fork():
            return None
        by_id = {id(c): c for c in classes}
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        # not a daemon: it forks the workers itself (multiprocessing forbids daemons to);
        # closed at session end, or at exit before multiprocessing joins its children
        process = ctx.Process(target=_serve, args=(child, by_id, os.getpid(), parent),
                              daemon=False)
        try:
            process.start()
        except OSError:
            return None
        child.close()
        zygote = cls(process, parent, set(by_id))
        atexit.register(zygote.close)
        return zygote

    def run(self, task, seed: int, fuzz: int = 0, context_options=None) -> list | None:
        """The task's results from a worker forked from the zygote; None when the zygote
        cannot answer (a class it does not know, a zygote that died)."""
        tests = ([task.test] if task.test is not None else []) + list(task.tests)
        if any(id(t.cls) not in self.known for t in tests) or self.process is None or \
                not self.process.is_alive():
            return None
        try:
            self.conn.send((_swap(task, id), seed, fuzz, dict(context_options or {})))
            status, value = self.conn.recv()
        except (EOFError, OSError):
            return None
        return value if status == "ok" else None

    def close(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(OSError, EOFError):
            self.conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.process = None
