"""`--resume DIR`: a sweep's finished units (the fork pool's tasks: an OpTest class, an
op-level check of an op, `fuzz` over an op; and each op's cross-process determinism results,
stored when the run ends) persist in DIR/units.jsonl as they finish; a
run with the same fingerprint (opkit's commit, Paddle's version, the seed and the run's
settings) takes them from there instead of running them again. docs/harness.md "Resuming".
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

from harness.reporting.report import CheckResult

__all__ = ["UNITS_FILE", "task_key", "fingerprint", "ResumeStore", "resumable"]

UNITS_FILE = "units.jsonl"


def task_key(task) -> str:
    """A task's name across runs and machines: its op, kind and what it runs (an OpTest
    class by its file's real path and name)."""
    if task.kind == "test":
        return f"{task.op}|test|{os.path.realpath(task.test.path)}::{task.test.name}"
    if task.kind == "op":
        return f"{task.op}|op|{task.check}"
    return f"{task.op}|{task.kind}|{task.name}"


def code_version() -> str:
    """The git commit of the tree opkit runs from ("<sha>"), else the installed package's
    version ("opkit-dl <version>")."""
    root = Path(__file__).resolve().parents[1]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        p = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                           text=True, timeout=30)
        if p.returncode == 0 and p.stdout.strip():
            return p.stdout.strip()
    from importlib import metadata

    try:
        return f"opkit-dl {metadata.version('opkit-dl')}"
    except metadata.PackageNotFoundError:
        return "unknown"


def paddle_version() -> str:
    """The installed PaddlePaddle's version ("" when none), read without importing it."""
    from importlib import metadata

    for dist in ("paddlepaddle", "paddlepaddle-gpu"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            return metadata.version(dist)
    return ""


def fingerprint(seed: int, **settings) -> dict:
    """What a finished unit must share with this run to be taken over: the code's commit,
    Paddle's version, the seed, and the run's `settings` (backend, checks, budgets)."""
    return {"commit": code_version(), "paddle": paddle_version(), "seed": seed,
            **{k: settings[k] for k in sorted(settings)}}


class ResumeStore:
    """DIR/units.jsonl: one line per finished unit ({"fingerprint", "key", "seconds",
    "results"}), appended and flushed as each finishes; lines of another fingerprint (or cut
    off by a crash) are ignored, and kept."""

    def __init__(self, folder, fp: dict):
        self.folder, self.fp = Path(folder), fp
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / UNITS_FILE
        self.done: dict[str, tuple[list, float]] = {}
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    row = json.loads(line)
                    if row["fingerprint"] == fp:
                        self.done[row["key"]] = ([CheckResult(**r) for r in row["results"]],
                                                 float(row["seconds"]))
                except (ValueError, KeyError, TypeError):
                    continue                # a line the crash of a sweep cut off
        self._file = None

    def add(self, key: str, results: list, seconds: float) -> None:
        if self._file is None:
            self._file = self.path.open("a")
        self._file.write(json.dumps({"fingerprint": self.fp, "key": key,
                                     "seconds": round(seconds, 3),
                                     "results": [r.to_json() for r in results]}) + "\n")
        self._file.flush()
        self.done[key] = (results, seconds)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def resumable(store: ResumeStore, executor, on_resumed=None):
    """An executor (harness.executing.pool.run_tasks' signature) that takes the units `store` holds and
    runs the others with `executor`, each stored as it finishes. `on_resumed(n)`: how many
    were taken over (before any runs)."""

    def run(tasks, checks=None, seed=0, timeout=None, jobs=1, isolate=True, fuzz=0,
            on_task_done=None, context_options=None, task_seconds=None, results=None):
        out = {} if results is None else results
        keys = [task_key(t) for t in tasks]
        todo = [i for i, k in enumerate(keys) if k not in store.done]
        if on_resumed:
            on_resumed(len(tasks) - len(todo))
        for i, k in enumerate(keys):
            if k in store.done:
                out[i], seconds = list(store.done[k][0]), store.done[k][1]
                if task_seconds is not None:
                    task_seconds[i] = seconds
                if on_task_done:
                    on_task_done(i)
        sub_results: dict = {}
        sub_seconds: dict = {}

        def finished(j):
            i = todo[j]
            out[i] = sub_results.get(j, [])
            if task_seconds is not None:
                task_seconds[i] = sub_seconds.get(j, 0.0)
            store.add(keys[i], out[i], sub_seconds.get(j, 0.0))
            if on_task_done:
                on_task_done(i)

        try:
            executor([tasks[i] for i in todo], checks, seed, timeout, jobs, isolate, fuzz,
                     on_task_done=finished, context_options=context_options,
                     task_seconds=sub_seconds, results=sub_results)
        finally:
            store.close()
        return out

    def kept_hash_seeds(ops) -> dict:
        """{op: its cross-process determinism results} of the ops an earlier run holds."""
        return {op: list(store.done[f"{op}|hash_seeds"][0]) for op in ops
                if f"{op}|hash_seeds" in store.done}

    def keep_hash_seeds(op, results) -> None:
        store.add(f"{op}|hash_seeds", results, 0.0)
        store.close()

    run.kept_hash_seeds, run.keep_hash_seeds = kept_hash_seeds, keep_hash_seeds
    return run
