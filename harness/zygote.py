"""A pristine process for the pytest plugin: the checks of an OpTest class run in children of a
process forked before any test ran, as `opkit test` runs them in children of a process where
no kernel has run.

Why: plain pytest runs every test in one process. A kernel that keeps state between calls
(a module-level cache keyed too narrowly) then spoils the checks of the OpTests that run
after its own -- their `output` fails, and their `state` compares a "fresh" run that is not
fresh -- so pytest and `opkit test` disagreed. The plugin starts a `Zygote` at the end of
collection; each request (one OpTest class, or the op-level `state` of an op) is run by
`harness.run.run_tasks` in a worker forked from the zygote, exactly as `opkit test` does.

    z = Zygote.start(classes)              # after collection, before any test ran
    results = z.run_class(cls, op, first_case=True, seed=2024)
    results = z.run_op(op, classes, seed=2024, check="state")
    results = z.run_op(op, classes, seed=2024, fuzz=1)
    z.close()

Where `os.fork` is unavailable (or a process already initialised CUDA), `start` returns None
and the plugin runs the checks in its own process as before.
"""
from __future__ import annotations

import multiprocessing

__all__ = ["Zygote"]


def _tests(classes, by_id, paths):
    from harness.discovery import DiscoveredTest

    return [DiscoveredTest(by_id[i], op, paths.get(i, "")) for i, op in classes]


def _serve(conn, by_id: dict, paths: dict) -> None:
    """The zygote's loop: one request at a time; it never runs a kernel itself."""
    from harness.run import Task, run_tasks

    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        kind, op, classes, first, seed, context_options, check = request
        tests = _tests(classes, by_id, paths)
        fuzz = 0
        if kind == "test":
            task = Task(op, "test", test=tests[0], first_case=first)
        elif kind == "fuzz":
            task, fuzz = Task(op, "fuzz", tests=tests, name=f"fuzz({op})"), int(check)
        else:
            task = Task(op, "op", tests=tests, name=f"{check}({op})", check=check)
        try:
            done = run_tasks([task], None, seed, None, 1, True, fuzz,
                             context_options=context_options)
            conn.send(("ok", done.get(0, [])))
        except BaseException as exc:  # noqa: BLE001 - the plugin falls back in-process
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class Zygote:
    def __init__(self, process, conn, paths):
        self.process, self.conn, self.paths = process, conn, paths

    @classmethod
    def start(cls, classes: dict) -> Zygote | None:
        """`classes`: {OpTest class: its source path}. None where forking is not safe."""
        from harness.forking import can_fork as _can_fork

        if not _can_fork():
            return None
        by_id = {id(c): c for c in classes}
        paths = {id(c): p for c, p in classes.items()}
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        # not a daemon: it forks the workers itself (multiprocessing forbids daemons to);
        # closed at session end, or at exit before multiprocessing joins its children
        process = ctx.Process(target=_serve, args=(child, by_id, paths), daemon=False)
        try:
            process.start()
        except OSError:
            return None
        child.close()
        zygote = cls(process, parent, paths)
        import atexit

        atexit.register(zygote.close)
        return zygote

    def _ask(self, request) -> list | None:
        if self.process is None or not self.process.is_alive():
            return None
        try:
            self.conn.send(request)
            status, value = self.conn.recv()
        except (EOFError, OSError):
            return None
        return value if status == "ok" else None

    def run_class(self, cls, op: str, first_case: bool, seed: int,
                  op_level: tuple = ()) -> list | None:
        """Every check on one OpTest class in a fresh worker (the op-level checks named in
        `op_level` left out); None when the zygote cannot answer."""
        if id(cls) not in self.paths:
            return None
        options = {"hash_seeds": "own", "op_level": tuple(op_level)}
        return self._ask(("test", op, [(id(cls), op)], first_case, seed, options, ""))

    def run_op(self, op: str, classes: list, seed: int, check: str = "",
               fuzz: int = 0) -> list | None:
        """A task over every OpTest class of the op: the op-level check `check` (e.g.
        `state`), or with `fuzz` N generated cases per class (case "fuzz:<class name>")."""
        if any(id(c) not in self.paths for c in classes):
            return None
        kind, what = ("fuzz", str(fuzz)) if fuzz else ("op", check)
        return self._ask((kind, op, [(id(c), op) for c in classes], True, seed, {}, what))

    def close(self) -> None:
        if self.process is None:
            return
        try:
            self.conn.send(None)
        except (OSError, EOFError):
            pass
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.process = None
