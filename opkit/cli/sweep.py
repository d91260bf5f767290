"""`opkit test --cluster ray[://HOST:PORT]` and `--resume DIR`: who runs the planned tasks
(harness.executing.ray_pool on a Ray cluster instead of the local fork pool) and which finished ones
are taken over (harness.executing.resume). docs/harness.md "Sweeps: --cluster and --resume".
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

#: what a Ray worker must see of this process's environment
FORWARDED = ("PYTHONPATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def add_arguments(parser) -> None:
    parser.add_argument("--cluster", metavar="ray[://HOST:PORT]", default=None,
                        help="run the tasks on a Ray cluster instead of the local fork pool: "
                             "'ray' (the cluster at $RAY_ADDRESS, else a local Ray started "
                             "here) or 'ray://HOST:PORT'; needs opkit-dl[ray]")
    parser.add_argument("--resume", metavar="DIR", default=None,
                        help="keep each finished task in DIR and take over the tasks DIR "
                             "already holds for the same commit, Paddle version, seed and "
                             "settings (a sweep that crashed goes on where it stopped)")


def cluster_address(value: str | None) -> str | None:
    """The Ray address `--cluster` names ("" = $RAY_ADDRESS or a local Ray), None without
    --cluster; a usage error for anything else."""
    if value is None:
        return None
    if value == "ray":
        return os.environ.get("RAY_ADDRESS", "")
    if value.startswith("ray://") and len(value) > len("ray://"):
        return value
    from opkit.cli.config import UsageError

    raise UsageError(f"--cluster {value}: expected 'ray' or 'ray://HOST:PORT'")


@dataclass
class Recipe:
    """Rebuilds, in a Ray worker, the tasks `opkit test` planned here (picklable: plain
    data; the worker needs the same opkit, backend and test files at the same paths)."""
    options_json: str
    paddle: bool
    ops: list
    all_ops: bool
    builtins: bool
    tests: list
    op_modules: list
    checks: list | None
    fuzz: int
    cwd: str = field(default_factory=os.getcwd)

    def __call__(self):
        from harness import options
        from harness.backend.dispatch import activate, compat_mode
        from harness.executing.pool import op_level_checks, plan
        from harness.selecting.suite import select

        if os.path.isdir(self.cwd):
            os.chdir(self.cwd)
        opts = options.Options.from_json(self.options_json)
        options.use(opts)
        if self.paddle:
            compat_mode("paddle").activate(opts.backend)
        activate(opts.backend, self.ops)
        selection = select(self.ops, all_ops=self.all_ops, builtins=self.builtins,
                           tests=self.tests, op_modules=self.op_modules, seed=opts.seed)
        return plan(selection.runnable, selection.by_op, self.fuzz, self.checks,
                    op_level_checks(self.checks))


def executor(args, opts, checks, fuzz: int):
    """The executor of this run (None: the fork pool) and a closing note for the report.
    Exit 2 (UsageError) for a bad --cluster / --resume, or --cluster without ray."""
    from opkit.cli.config import UsageError

    address = cluster_address(getattr(args, "cluster", None))
    resume = getattr(args, "resume", None)
    run = None
    if address is not None:
        from harness.executing.ray_pool import ray_executor, ray_missing

        missing = ray_missing()
        if missing:
            raise UsageError(f"--cluster {args.cluster}: {missing}")
        if args.no_isolate:
            raise UsageError("--cluster with --no-isolate: a Ray worker always runs each "
                             "task in a process of its own; drop one")
        env = {k: v for k, v in os.environ.items() if k in FORWARDED or k.startswith("OPKIT_")}
        recipe = Recipe(opts.to_json(), bool(getattr(args, "paddle", False)), list(args.op),
                        args.all, args.builtins, [os.path.abspath(t) for t in args.tests],
                        list(args.ops or []), checks, fuzz)
        run = ray_executor(address, recipe, env,
                           workers=args.jobs if getattr(args, "jobs_given", False) else 0)
        run.start()      # the workers rebuild the plan while this process discovers it
    notes = []
    if resume is not None:
        from harness.executing.resume import ResumeStore, fingerprint, resumable

        if os.path.exists(resume) and not os.path.isdir(resume):
            raise UsageError(f"--resume {resume}: not a folder")
        fp = fingerprint(opts.seed, backend=opts.backend, against=opts.against,
                         checks=sorted(checks) if checks is not None else None, fuzz=fuzz,
                         explore=opts.explore, dtypes=list(opts.dtypes),
                         places=list(opts.places), timeout=opts.timeout)
        try:
            store = ResumeStore(resume, fp)
        except OSError as exc:
            raise UsageError(f"--resume {resume}: {exc}") from None
        from harness.executing.pool import run_tasks

        def resumed(n):
            if n:
                print(f"opkit test: --resume {resume}: {n} finished task{'' if n == 1 else 's'}"
                      " taken over (same commit, Paddle version, seed and settings)",
                      file=sys.stderr)
                notes.append(f"--resume {resume}: {n} task{'' if n == 1 else 's'} taken over "
                             f"from an earlier run")

        run = resumable(store, run or run_tasks, on_resumed=resumed)
    return run, notes
