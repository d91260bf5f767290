"""`opkit test`: every harness check for ops; one line per passing op, a table per failing op.

    opkit test clip relu            the named ops (exit 2 if one is unknown or has no OpTest)
    opkit test --all                every op of the project (its own ops; the built-in ops
                                    too with --builtins, or when it has none of its own)
    opkit test                      every op that the discovered OpTests cover, and the
                                    project's own ops (one without an OpTest fails, as
                                    with --all)
    opkit test --paddle --tests DIR Paddle's own OpTest files, unchanged (docs/paddle.md)
An op with no OpTest fails unless `[tool.opkit.exempt]` names it with a reason; an op with
a grad op whose OpTests never call check_grad fails `grad` ("no gradient test"); a test file
that cannot be imported, or an OpTest for an unregistered op, fails with its file and line.
Exit status: 0 every check passed (or skipped), 1 a check failed, 2 usage error.
"""
from __future__ import annotations

import json
import math
import sys

from harness.options import DEFAULT_SEED
from opkit.cli.config import add_format_option, add_ops_option
EXIT_CODES = {0: "every check passed (or was skipped / exempt)",
              1: "a check failed (or a test file or OpTest is broken)",
              2: "usage error (bad flag, environment variable or configuration)"}


# what the progress line counts (harness.executing.pool.plan's tasks, planned once by harness.api.run)
TASKS = "tasks (OpTest classes, per-op checks, fuzzed ops)"


def add_arguments(parser) -> None:
    parser.add_argument("op", nargs="*",
                        help="op types to test (none: every op the discovered OpTests "
                             "cover, and the project's own ops, --ops or [tool.opkit] ops: "
                             "one without an OpTest fails, as with --all)")
    parser.add_argument("--all", action="store_true",
                        help="test every op of the project (see --builtins)")
    parser.add_argument("--builtins", action="store_true",
                        help="with --all: also test opkit's built-in ops (default when the "
                             "project loads no ops of its own, or [tool.opkit] "
                             "builtin-tests = true)")
    add_ops_option(parser)
    parser.add_argument("--tests", action="append", default=[], metavar="PATH",
                        help="test files or folders holding OpTest classes (repeatable; "
                             "default: [tool.opkit] tests)")
    add_format_option(parser)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="a full table for every op (default: only failing ops)")
    parser.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                        help="run N cases at a time in forked worker processes (default 0: "
                             "automatic, one per available CPU, at most 8; 1: one at a time)")
    parser.add_argument("--shard", metavar="K/N",
                        help="run only part K of N of the ops (1 <= K <= N), balanced by "
                             "the recorded durations when a durations file exists")
    parser.add_argument("--durations", metavar="FILE",
                        help="durations file for --shard and --record-durations (default: "
                             "[tool.opkit] durations, else .opkit_durations.json next to "
                             "pyproject.toml); must exist unless --record-durations writes "
                             "it (exit 2)")
    parser.add_argument("--record-durations", action="store_true",
                        help="write each op's run time to the durations file")
    from harness.options import DEFAULT_EXPLORE, DEFAULT_FUZZ

    parser.add_argument("--fuzz", type=int, default=None, metavar="N",
                        help=f"draw N generated cases per OpTest, with the input variants "
                             f"applied (check 'fuzz'; default {DEFAULT_FUZZ}, 0: off)")
    parser.add_argument("--explore", type=int, default=None, metavar="N",
                        help=f"derived cases the 'explore' check judges per OpTest case "
                             f"(default {DEFAULT_EXPLORE}, or $OPKIT_EXPLORE; 0: off)")
    parser.add_argument("--seed", type=int, default=None,
                        help=f"seed of every random generator, >= 0 (default {DEFAULT_SEED}, "
                             f"or $OPKIT_SEED)")
    parser.add_argument("--checks", metavar="NAMES",
                        help="comma-separated subset of checks (default: all; 'fuzz' runs "
                             "the --fuzz budget, so not with --fuzz 0)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="time limit per check, a finite number of seconds >= 0 "
                             "(default 120; 0: none)")
    parser.add_argument("--place", choices=["CPU", "GPU", "all"], default=None,
                        help="places to run on (default all; $OPKIT_PLACE)")
    parser.add_argument("--dtype", choices=["float32", "float64", "all"], default=None,
                        help="float dtypes to run (default all; $OPKIT_DTYPE)")
    parser.add_argument("--paddle", action="store_true",
                        help="Paddle-compatibility mode: run Paddle's own OpTest files "
                             "unchanged (see docs/paddle.md)")
    parser.add_argument("--backend", type=_backend_name, default=None, metavar="NAME",
                        help="whose kernels the checks run: opkit's (default) or an "
                             "installed backend's (an opkit.backends entry point: paddle, "
                             "PaddlePaddle's own CPU kernels, needs opkit-dl[paddle]; an "
                             "unknown NAME lists them; $OPKIT_BACKEND)")
    parser.add_argument("--against", type=_other_backend_name, default=None, metavar="NAME",
                        help="also run Paddle's kernel beside opkit's op on every case "
                             "and derived case and fail on a disagreement (check 'against')")
    parser.add_argument("--no-isolate", action="store_true",
                        help="run the checks in this process (no crash isolation)")
    from opkit.cli.sweep import add_arguments as add_sweep_arguments

    add_sweep_arguments(parser)


def _backend_name(value: str, builtin: bool = True) -> str:
    """`value` when it names an installed backend (argparse's own message otherwise). The
    names are read from the entry points when a value is parsed, not while the parser is
    built: `opkit test --help` reads none (importlib.metadata is slow to import)."""
    import argparse

    from harness.options import backend_names

    names = backend_names()[0 if builtin else 1:]
    if value not in names:
        raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (choose from "
                                         f"{', '.join(map(repr, names))})")
    return value


def _other_backend_name(value: str) -> str:
    """A backend other than opkit's own (--against)."""
    return _backend_name(value, builtin=False)


def _usage(msg: str):
    from opkit.cli.config import UsageError

    return UsageError(msg)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    from harness.selecting.sharding import ShardError
    from harness.selecting.sharding import parse_shard as parse

    try:
        return parse(text)
    except ShardError as exc:
        raise _usage(str(exc)) from None


def shard(ops: list[str], spec: tuple[int, int] | None, durations=None) -> list[str]:
    """Part K of N of the ops (round-robin over the sorted ops without durations)."""
    from harness.selecting.sharding import part

    return part(ops, spec, durations)


def _options(args):
    """THE run's options (harness.options.Options), built once here from the flags over the
    OPKIT_* variables; installed for this process and every worker."""
    from harness.options import DEFAULT_TIMEOUT, Options, OptionsError

    if args.seed is not None and args.seed < 0:
        raise _usage(f"--seed {args.seed}: must be >= 0")
    try:
        opts = Options.from_env(seed=args.seed, places=args.place, dtypes=args.dtype,
                                explore=getattr(args, "explore", None),
                                backend=getattr(args, "backend", None),
                                against=getattr(args, "against", None),
                                place_option="--place")
    except OptionsError as exc:
        raise _usage(str(exc)) from None
    from harness.backend.dispatch import unavailable

    for flag, name in (("--backend", opts.backend), ("--against", opts.against)):
        why = unavailable(name) if name else None
        if why:
            raise _usage(f"{flag} {name}: {why}")
    if opts.against and opts.backend == opts.against:
        raise _usage(f"--against {opts.against} with --backend {opts.backend}: the same "
                     f"kernels on both sides")
    return opts.replace(timeout=DEFAULT_TIMEOUT if args.timeout is None else
                        (args.timeout or None))


def automatic_jobs() -> int:
    """One worker per CPU this process may run on, at most 8."""
    import os

    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(8, cpus))


def _validate(args) -> None:
    if args.jobs < 0:
        raise _usage(f"--jobs {args.jobs}: must be >= 0 (0: automatic)")
    args.jobs_given = args.jobs != 0
    if args.jobs == 0:
        args.jobs = automatic_jobs()
    if args.fuzz is not None and args.fuzz < 0:
        raise _usage(f"--fuzz {args.fuzz}: must be >= 0")
    if getattr(args, "explore", None) is not None and args.explore < 0:
        raise _usage(f"--explore {args.explore}: must be >= 0")
    if args.timeout is not None and (not math.isfinite(args.timeout) or args.timeout < 0):
        raise _usage(f"--timeout {args.timeout:g}: must be a finite number of seconds >= 0 "
                     f"(0: no limit)")
    if args.all and args.op:
        raise _usage(f"--all tests every op: drop the op name(s) {', '.join(args.op)} "
                     f"or --all")
    if args.builtins and not args.all:
        raise _usage("--builtins goes with --all")
    from harness.options import validate_environment

    try:
        validate_environment()
    except ValueError as exc:
        raise _usage(str(exc)) from None


def _checks(args) -> tuple[list[str] | None, bool]:
    """(the harness checks to run or None for all, whether fuzz runs)."""
    from harness.checks.catalog import check_names
    from harness.options import DEFAULT_FUZZ

    explicit = args.fuzz is not None
    if not explicit:
        args.fuzz = DEFAULT_FUZZ
    if not args.checks:
        return None, args.fuzz > 0
    checks = [c.strip() for c in args.checks.split(",") if c.strip()]
    known = check_names() + ["fuzz"]
    unknown = [c for c in checks if c not in known]
    if unknown or not checks:
        raise _usage(f"--checks: unknown check(s) {', '.join(unknown) or '(none given)'} "
                     f"(known: {', '.join(known)})")
    fuzz = "fuzz" in checks
    if fuzz and args.fuzz == 0:
        raise _usage("--checks fuzz with --fuzz 0: say how many cases with --fuzz N (N >= 1)")
    if not fuzz:
        if not explicit:
            args.fuzz = 0          # the default budget goes with the default checks
        elif args.fuzz:
            raise _usage(f"--fuzz {args.fuzz} with --checks {args.checks}: add 'fuzz' "
                         f"to --checks, or drop --fuzz")
    return [c for c in checks if c != "fuzz"], fuzz


def run(args) -> int:
    from harness.options import set_place_option

    _validate(args)
    from harness import options as run_options

    opts = _options(args)
    run_options.use(opts)       # forked workers inherit it; fresh interpreters get its JSON
    seed = opts.seed
    spec = parse_shard(args.shard)
    checks, fuzzing = _checks(args)
    if opts.against and (checks is None or "against" not in checks):
        from harness.checks.catalog import all_checks

        checks = (checks if checks is not None else
                  [c.name for c in all_checks() if c.default]) + ["against"]
    set_place_option("--place")

    from opkit.cli.sweep import executor

    run_tasks_with, sweep_notes = executor(args, opts, checks, args.fuzz if fuzzing else 0)
    from harness.backend.dispatch import activate, compat_mode, selector

    if getattr(args, "paddle", False):
        compat_mode("paddle").activate(opts.backend)
    activate(opts.backend, args.op)
    from harness.selecting.suite import SuiteError, select
    from opkit.project import load_project

    project = load_project()
    try:
        selection = select(args.op, all_ops=args.all, builtins=args.builtins,
                           tests=args.tests, op_modules=args.ops, seed=seed)
    except SuiteError as exc:
        raise _usage(str(exc) + no_optest_hint(str(exc), args.op, opts.backend)) from None
    for problem in selection.warnings:
        print(f"opkit test: warning: {problem}", file=sys.stderr)
    ops = selection.ops
    from harness.selecting.sharding import read_durations, write_durations

    durations_file = _durations_path(args, project)
    if args.durations and not args.record_durations and not durations_file.is_file():
        raise _usage(f"--durations {args.durations}: no such file (it is read by --shard; "
                     f"write it with --record-durations)")
    if args.record_durations:
        from harness.selecting.sharding import durations_problem

        problem = durations_problem(durations_file)
        if problem:
            source = "--durations" if args.durations else "[tool.opkit] durations"
            raise _usage(f"--record-durations: cannot write the durations file "
                         f"({source}): {problem}")
    if spec:
        from harness.selecting.sharding import ShardError

        try:
            ops = shard(ops, spec, read_durations(durations_file))
        except ShardError as exc:
            raise _usage(str(exc)) from None

    print(f"opkit test: seed {seed} (reproduce with --seed {seed})"
          + (f"; backend {opts.backend}" if selector(opts.backend) else "")
          + (f"; against {opts.against}" if opts.against else ""), file=sys.stderr)
    from harness import api
    from opkit.cli.table import progress, render

    notes = []
    from harness.selecting.suite import active_compat

    if active_compat() is not None and selection.unimportable:
        unimportable = selection.unimportable
        notes.append(f"Paddle mode: {len(unimportable)} test file"
                     f"{'' if len(unimportable) == 1 else 's'} could not be imported "
                     "(each a failed check above): " + "; ".join(unimportable))
    outcome = api.run(selection, ops, checks=checks, seed=seed, timeout=opts.timeout,
                      jobs=args.jobs, isolate=not args.no_isolate,
                      fuzz=args.fuzz if fuzzing else 0,
                      progress=lambda total: progress(total, "opkit test",
                                                      enabled=args.all or total > 4, unit=TASKS),
                      executor=run_tasks_with)
    reports, finished = outcome.reports, outcome.seconds
    notes += outcome.notes + sweep_notes
    if args.record_durations and finished:
        write_durations(durations_file, finished)
        print(f"opkit test: wrote durations of {len(finished)} op{'' if len(finished) == 1 else 's'} to {durations_file}",
              file=sys.stderr)
    if args.format == "json":
        doc = {"ops": [dict(r.to_json(), backend=opts.backend) for r in reports],
               "seed": seed}
        if notes:
            doc["notes"] = notes
        print(json.dumps(doc, indent=1))
    else:
        render(reports, seed=seed, verbose=args.verbose, notes=notes)
    if any(r.status == "fail" for r in reports):
        return 1
    if active_compat() is not None and reports and all(r.status == "skip" for r in reports):
        # Paddle's files on a CPU build: every class skipped (CUDA-only, out of scope, ...)
        print("opkit test: judged nothing: every OpTest of the test files given was skipped "
              "(the reasons above); exit 2, not a pass", file=sys.stderr)
        return 2
    return 0


EXAMPLES = "examples/paddle_op"    # the repository's example OpTests for --backend paddle


def no_optest_hint(error: str, ops, backend: str) -> str:
    """What to do about `no OpTest found for op ...`: name the folder with --tests; for
    --backend paddle, the repository's example (examples/paddle_op, not installed by pip: in
    a clone of opkit), with its path where this opkit runs from a clone."""
    if "no OpTest found for op" not in error:
        return ""
    hint = "; pass the file or folder holding its OpTest with --tests PATH"
    from harness.backend.dispatch import selector

    if not selector(backend):          # the default backend: no example to point at
        return hint
    from pathlib import Path

    import opkit

    clone = Path(opkit.__file__).resolve().parents[1] / EXAMPLES
    found = [clone / f"test_{op}_op.py" for op in ops if (clone / f"test_{op}_op.py").is_file()]
    if found:
        return hint + f" (the repository's example: --tests {found[0]})"
    return hint + (f" (example OpTests for --backend {backend} are in {EXAMPLES}/ of the opkit "
                   "repository; pip does not install them: use a clone)")


def _durations_path(args, project):
    from pathlib import Path

    if args.durations:
        return Path(args.durations)
    return project.durations_path()
