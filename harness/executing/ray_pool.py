"""`--cluster ray`: the fork pool's tasks run on Ray (an optional extra, `opkit-dl[ray]`).

Each Ray worker is an actor holding one CPU: it rebuilds the run's plan once from a
`recipe` (a picklable callable returning the same tasks as the driver's `plan`), then runs
the tasks it is sent, by key (harness.executing.resume.task_key), each through the fork pool
(`run_tasks` with one task): a kernel that kills its process is a `crash` row of that task,
as without Ray, and the actor lives on. An actor that dies anyway (out of memory, a lost
node) makes the task it ran a `crash` row and is replaced. docs/harness.md "On a Ray
cluster".
"""
from __future__ import annotations

import os

from harness.checks.base import Crashed
from harness.reporting.report import FAIL, CheckResult
from harness.executing.resume import task_key
from harness.executing.pool import run_tasks

__all__ = ["RAY_EXTRA", "ray_missing", "ray_executor", "RayExecutor", "Runner"]

RAY_EXTRA = "opkit-dl[ray]"
#: actors that may die in a row (no task finished between) before the run gives up on Ray
MAX_DEATHS = 4


def ray_missing() -> str:
    """Why `--cluster ray` cannot run here ("" when it can)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return (f"the Python package 'ray' is not installed: pip install \"{RAY_EXTRA}\" "
                f"(or pip install ray)")
    return ""


class Runner:
    """A Ray actor's state: the run's tasks, rebuilt by `recipe()` in the actor's process."""

    def __init__(self, recipe, env: dict):
        os.environ.update(env)
        self.tasks = {task_key(t): t for t in recipe()}

    def run(self, key, checks, seed, timeout, fuzz, context_options):
        task = self.tasks.get(key)
        if task is None:
            return [CheckResult("output", FAIL, "", "", key, "the Ray worker's plan has no "
                                "such task (the worker sees other test files)").to_json()], 0.0
        seconds: dict = {}
        got = run_tasks([task], checks, seed, timeout, 1, True, fuzz,
                        context_options=context_options, task_seconds=seconds)
        return [r.to_json() for r in got.get(0, [])], seconds.get(0, 0.0)


def _death(task, exc, ran: bool = True) -> CheckResult:
    why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    what = "the Ray worker died while running this task" if ran else \
        f"not run: {MAX_DEATHS} Ray workers died in a row, the last"
    return CheckResult("output", FAIL, "", "", task.name, f"{what} ({why[:300]})",
                       kind=Crashed.kind)


class RayExecutor:
    """An executor (harness.executing.pool.run_tasks' signature) on the Ray cluster at `address` (""
    : RAY_ADDRESS, else a local Ray started here). `workers`: actors (0: one per CPU of the
    cluster). `env`: variables every actor sets (PYTHONPATH, OPKIT_*, ...). `start()` may
    be called early (before the run discovers its tests): the actors then rebuild the plan
    while this process does the same."""

    def __init__(self, address: str, recipe, env: dict, workers: int = 0):
        self.address, self.recipe, self.env, self.workers = address, recipe, env, workers
        self.actors: list = []
        self.actor_cls = None

    def start(self) -> None:
        import ray

        if self.actor_cls is not None:
            return
        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS") or None
            # a local Ray started here runs its workers at this process's priority (Ray's
            # default, nice 15, would put the checks behind everything else on the machine)
            local = {} if address else {"_system_config": {"worker_niceness": 0}}
            ray.init(address=address, runtime_env={"env_vars": self.env},
                     log_to_driver=False, include_dashboard=False, logging_level="ERROR",
                     **local)
        count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.actor_cls = ray.remote(num_cpus=1)(Runner)
        self.actors = [self.actor_cls.remote(self.recipe, self.env) for _ in range(count)]

    def __call__(self, tasks, checks=None, seed=0, timeout=None, jobs=1, isolate=True,
                 fuzz=0, on_task_done=None, context_options=None, task_seconds=None,
                 results=None):
        import ray

        out = {} if results is None else results
        if not tasks:
            self.close()
            return out
        self.start()
        idle, self.actors = self.actors, []
        pending = list(range(len(tasks)))
        inflight: dict = {}
        deaths = 0
        while pending or inflight:
            while pending and idle:
                actor, i = idle.pop(), pending.pop(0)
                ref = actor.run.remote(task_key(tasks[i]), checks, seed, timeout, fuzz,
                                       context_options)
                inflight[ref] = (actor, i)
            # a bounded wait: Python sees a Ctrl-C between two waits (not inside one)
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0)
            for ref in ready:
                actor, i = inflight.pop(ref)
                try:
                    rows, seconds = ray.get(ref)
                    got = [CheckResult(**r) for r in rows]
                    deaths = 0
                except ray.exceptions.RayError as exc:
                    got, seconds = [_death(tasks[i], exc)], 0.0
                    deaths += 1
                    ray.kill(actor, no_restart=True)
                    actor = self.actor_cls.remote(self.recipe, self.env)
                    if deaths >= MAX_DEATHS:     # workers that cannot even start
                        for j in pending:
                            out[j] = [_death(tasks[j], exc, ran=False)]
                            if on_task_done:
                                on_task_done(j)
                        pending = []
                idle.append(actor)
                out[i] = got
                if task_seconds is not None:
                    task_seconds[i] = seconds
                if on_task_done:
                    on_task_done(i)
        self.actors = idle
        self.close()
        return out

    def close(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)
        self.actors = []


def ray_executor(address: str, recipe, env: dict, workers: int = 0) -> RayExecutor:
    """`RayExecutor(address, recipe, env, workers)`."""
    return RayExecutor(address, recipe, env, workers)
