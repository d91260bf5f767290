"""`opkit test`: every harness check for ops; one line per passing op, a table per failing op.

    opkit test clip relu            the named ops (exit 2 if one is unknown or has no OpTest)
    opkit test --all                every op of the project (its own ops; the built-in ops
                                    too with --builtins, or when it has none of its own)
    opkit test                      every op that the discovered OpTests cover
    opkit test --paddle --tests DIR Paddle's own OpTest files, unchanged (docs/paddle.md)
An op with no OpTest fails unless `[tool.opkit.exempt]` names it with a reason; an op with
a grad op whose OpTests never call check_grad fails `grad` ("no gradient test"); a test file
that cannot be imported, or an OpTest for an unregistered op, fails with its file and line.
Exit status: 0 every check passed (or skipped), 1 a check failed, 2 usage error.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time

from opkit.cli.config import add_format_option, add_ops_option

DEFAULT_SEED = 2024
EXIT_CODES = {0: "every check passed (or was skipped / exempt)",
              1: "a check failed (or a test file or OpTest is broken)",
              2: "usage error (bad flag, environment variable or configuration)"}


def add_arguments(parser) -> None:
    parser.add_argument("op", nargs="*", help="op types to test")
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
    parser.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                        help="run N cases at a time in forked worker processes")
    parser.add_argument("--xdist", action="store_true",
                        help="with --jobs: run the cases on pytest-xdist workers instead")
    parser.add_argument("--no-xdist", action="store_true",
                        help="with --jobs: use opkit's own fork pool (the default)")
    parser.add_argument("--shard", metavar="K/N",
                        help="run only part K of N of the ops (1 <= K <= N), balanced by "
                             "the recorded durations when a durations file exists")
    parser.add_argument("--durations", metavar="FILE",
                        help="durations file for --shard and --record-durations (default: "
                             "[tool.opkit] durations, else .opkit_durations.json next to "
                             "pyproject.toml)")
    parser.add_argument("--record-durations", action="store_true",
                        help="write each op's run time to the durations file")
    from harness.fuzz import DEFAULT_FUZZ

    parser.add_argument("--fuzz", type=int, default=None, metavar="N",
                        help=f"draw N generated cases per OpTest, with the input variants "
                             f"applied (check 'fuzz'; default {DEFAULT_FUZZ}, 0: off)")
    parser.add_argument("--seed", type=int, default=None,
                        help=f"seed of every random generator, >= 0 (default {DEFAULT_SEED}, "
                             f"or $OPKIT_SEED)")
    parser.add_argument("--checks", metavar="NAMES",
                        help="comma-separated subset of checks (default: all; 'fuzz' runs "
                             "the --fuzz budget, so not with --fuzz 0)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="time limit per check, > 0 (default 120; 0: none)")
    parser.add_argument("--place", choices=["CPU", "GPU", "all"], default=None,
                        help="places to run on (default all; $OPKIT_PLACE)")
    parser.add_argument("--dtype", choices=["float32", "float64", "all"], default=None,
                        help="float dtypes to run (default all; $OPKIT_DTYPE)")
    parser.add_argument("--paddle", action="store_true",
                        help="Paddle-compatibility mode: run Paddle's own OpTest files "
                             "unchanged (see docs/paddle.md)")
    parser.add_argument("--no-isolate", action="store_true",
                        help="run the checks in this process (no crash isolation)")


def _usage(msg: str):
    from opkit.cli.main import UsageError

    return UsageError(msg)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    from harness.sharding import ShardError
    from harness.sharding import parse_shard as parse

    try:
        return parse(text)
    except ShardError as exc:
        raise _usage(str(exc)) from None


def shard(ops: list[str], spec: tuple[int, int] | None, durations=None) -> list[str]:
    """Part K of N of the ops (round-robin over the sorted ops without durations)."""
    from harness.sharding import part

    return part(ops, spec, durations)


def forward_op_types() -> list[str]:
    from opkit.registry import all_op_types

    types = all_op_types()
    known = set(types)
    return [t for t in types if not (t.endswith("_grad") and t[: -len("_grad")] in known)]


def _seed(args) -> int:
    if args.seed is not None:
        if args.seed < 0:
            raise _usage(f"--seed {args.seed}: must be >= 0")
        return args.seed
    text = os.environ.get("OPKIT_SEED")
    if text is None or not text.strip():
        return DEFAULT_SEED
    try:
        value = int(text)
    except ValueError:
        raise _usage(f"OPKIT_SEED={text!r}: not an integer") from None
    if value < 0:
        raise _usage(f"OPKIT_SEED={text!r}: must be >= 0")
    return value


def _validate(args) -> None:
    if args.jobs < 1:
        raise _usage(f"--jobs {args.jobs}: must be >= 1")
    if args.fuzz is not None and args.fuzz < 0:
        raise _usage(f"--fuzz {args.fuzz}: must be >= 0")
    if args.timeout is not None and (not math.isfinite(args.timeout) or args.timeout < 0):
        raise _usage(f"--timeout {args.timeout:g}: must be a finite number of seconds >= 0 "
                     f"(0: no limit)")
    if args.all and args.op:
        raise _usage(f"--all tests every op: drop the op name(s) {', '.join(args.op)} "
                     f"or --all")
    if args.builtins and not args.all:
        raise _usage("--builtins goes with --all")
    if args.xdist and args.no_xdist:
        raise _usage("--xdist and --no-xdist contradict each other")
    from harness import settings

    try:
        settings.validate_environment()
    except ValueError as exc:
        raise _usage(str(exc)) from None


def _runs_anything(cls) -> bool:
    """Whether an OpTest class has a test method of its own (not only the base's)."""
    return any(name.startswith("test") and callable(getattr(cls, name, None))
               for name in dir(cls))


def _checks(args) -> tuple[list[str] | None, bool]:
    """(the harness checks to run or None for all, whether fuzz runs)."""
    from harness.checks.registry import check_names
    from harness.fuzz import DEFAULT_FUZZ

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
    from harness import settings

    _validate(args)
    seed = _seed(args)
    spec = parse_shard(args.shard)
    checks, fuzzing = _checks(args)
    settings.set_place_option("--place")
    if args.place or args.dtype:
        settings.configure(args.place, args.dtype)
        if args.place:
            os.environ["OPKIT_PLACE"] = args.place
        if args.dtype:
            os.environ["OPKIT_DTYPE"] = args.dtype

    if getattr(args, "paddle", False):
        from harness import paddle_compat

        paddle_compat.activate()
    from harness.discovery import (builtin_exemptions, builtin_test_paths, discover,
                                   test_paths)
    from harness.verdicts import (class_location, guess_op_from_file, lacks_gradient_test,
                                  no_gradient_test_result, no_optest_result)
    from opkit.project import load_builtin_ops, load_op_modules, load_project

    project = load_project()
    load_builtin_ops()
    from opkit.registry import has_op, op_info

    builtin_ops = set(forward_op_types())
    load_op_modules(args.ops, project, builtins=False)
    own_ops = [op for op in forward_op_types() if op not in builtin_ops]

    for op in args.op:
        if not has_op(op):
            try:
                op_info(op)
            except Exception as exc:  # NotFound with the close names
                raise _usage(str(exc).split("NotFound: ")[-1]) from None

    with_builtins = args.all and (args.builtins or project.builtin_tests or not own_ops)
    paths = test_paths(args.tests)
    if not args.tests and (with_builtins or any(op in builtin_ops for op in args.op)):
        paths = paths + [p for p in builtin_test_paths() if p not in paths]
    exempt = dict(project.exempt)
    if with_builtins or any(op in builtin_ops for op in args.op):
        exempt = {**builtin_exemptions(), **exempt}
    discovery = discover(paths, seed=seed)
    for problem in discovery.problems:
        if not any(problem == b.text for b in discovery.broken):
            print(f"opkit test: warning: {problem}", file=sys.stderr)
    by_op = discovery.by_op()

    # broken test files and OpTests: failures of their op (or of the file itself)
    from harness.report import FAIL, CheckResult
    from harness.run import OpReport

    broken: dict[str, list[CheckResult]] = {}
    for b in discovery.broken:
        guess = guess_op_from_file(b.path)
        key = guess if guess and (guess in args.op or not args.op) else f"<{b.path}>"
        broken.setdefault(key, []).append(CheckResult("output", FAIL, "", "", "", b.text))
    for t in discovery.tests:
        where = class_location(t.cls)
        if not t.op_type and not t.error and not _runs_anything(t.cls):
            continue   # no op_type and no test method: unittest and pytest run nothing either
        if not t.op_type:
            broken.setdefault(f"<{t.path}>", []).append(CheckResult(
                "output", FAIL, "", "", t.name, f"{where}: {t.name} has no op_type after "
                f"setUp" + (f" ({t.error})" if t.error else "")))
        elif not has_op(t.op_type) and _paddle_mode():
            from harness.report import SKIP     # Paddle's files test ops opkit does not have

            broken.setdefault(t.op_type, []).append(CheckResult(
                "output", SKIP, "", "", t.name, f"{where}: out of scope: opkit has no op "
                f"'{t.op_type}' (Paddle-compatibility mode)"))
        elif not has_op(t.op_type):
            try:
                op_info(t.op_type)
                hint = ""
            except Exception as exc:  # noqa: BLE001 - NotFound with the close names
                hint = f" ({str(exc).split('NotFound: ')[-1]})"
            broken.setdefault(t.op_type, []).append(CheckResult(
                "output", FAIL, "", "", t.name, f"{where}: OpTest {t.name} tests op "
                f"'{t.op_type}', which is not registered{hint}; load it with --ops or "
                f"[tool.opkit] ops"))
    if args.op:
        broken = {k: v for k, v in broken.items() if k in args.op}

    if args.all:
        ops = sorted(own_ops) + (sorted(builtin_ops) if with_builtins else [])
        ops += sorted(op for op in by_op if op not in ops and has_op(op))
    elif args.op:
        ops = list(dict.fromkeys(args.op))
        missing = [op for op in ops if op not in by_op and op not in broken
                   and op not in exempt]
        if missing:
            where = ", ".join(str(p) for p in paths) or "(no test paths)"
            raise _usage(f"no OpTest found for op{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(repr(m) for m in missing)} under {where}")
    else:
        ops = sorted(op for op in by_op if has_op(op))
        if not ops and not broken:
            where = ", ".join(str(p) for p in paths) or "(no test paths)"
            raise _usage(f"no OpTest found under {where}; name ops, use --all or --tests")
    ops += sorted(k for k in broken if k not in ops)

    from harness.sharding import read_durations, write_durations

    durations_file = _durations_path(args, project)
    if spec:
        from harness.sharding import ShardError

        try:
            ops = shard(ops, spec, read_durations(durations_file))
        except ShardError as exc:
            raise _usage(str(exc)) from None

    print(f"opkit test: seed {seed} (reproduce with --seed {seed})", file=sys.stderr)
    from harness.run import DEFAULT_TIMEOUT, plan, run_ops
    from harness.table import progress, render

    timeout = DEFAULT_TIMEOUT if args.timeout is None else (args.timeout or None)
    runnable = [op for op in ops if op not in broken or op in by_op]
    runnable = [op for op in runnable if has_op(op)]
    notes = []
    if _paddle_mode() and discovery.broken:
        notes.append(f"Paddle mode: {len(discovery.broken)} test file"
                     f"{'' if len(discovery.broken) == 1 else 's'} could not be imported "
                     "(each a failed check above): " + "; ".join(b.text for b in
                                                                 discovery.broken))
    unusable = settings.unusable_selection()
    finished: dict[str, float] = {}
    if unusable:
        from harness.report import SKIP

        notes.append(f"nothing ran: {unusable}")
        reports = [OpReport(op, [CheckResult("output", SKIP, "", "", "", unusable)])
                   for op in runnable]
    else:
        from harness.run import op_level_checks

        tasks, _ = plan(runnable, by_op, args.fuzz if fuzzing else 0, checks,
                        [] if args.no_isolate else op_level_checks(checks))
        started = time.monotonic()
        last = [started]

        def done(index):
            now = time.monotonic()
            op = tasks[index].op
            finished[op] = finished.get(op, 0.0) + (now - last[0])
            last[0] = now
            advance()

        with progress(len(tasks), "opkit test",
                      enabled=args.all or len(tasks) > 4) as advance:
            reports = run_ops(runnable, by_op, checks=checks, seed=seed, timeout=timeout,
                              jobs=args.jobs, isolate=not args.no_isolate,
                              fuzz=args.fuzz if fuzzing else 0, progress=done,
                              xdist=args.xdist, op_modules=args.ops, test_paths=paths)
    by_name = {r.op: r for r in reports}
    out = []
    for op in ops:
        rep = by_name.get(op) or OpReport(op)
        if op in broken:
            rep.results = broken[op] + rep.results
        if not by_op.get(op) and op not in broken and not unusable:
            result, reason = no_optest_result(op, exempt)
            rep.results = [result]
            rep.exempt = reason
            rep.note = ""
        elif (by_op.get(op) and not unusable and (checks is None or "grad" in checks)
              and lacks_gradient_test(op, [t.cls for t in by_op[op]])):
            rep.results.append(no_gradient_test_result(op, [t.cls for t in by_op[op]]))
        out.append(rep)
    reports = out
    if args.record_durations and finished:
        if args.jobs > 1:
            print("opkit test: note: durations recorded with --jobs > 1 are approximate",
                  file=sys.stderr)
        write_durations(durations_file, finished)
        print(f"opkit test: wrote durations of {len(finished)} op{'' if len(finished) == 1 else 's'} to {durations_file}",
              file=sys.stderr)
    if args.format == "json":
        doc = {"ops": [r.to_json() for r in reports], "seed": seed}
        if notes:
            doc["notes"] = notes
        print(json.dumps(doc, indent=1))
    else:
        render(reports, seed=seed, verbose=args.verbose, notes=notes)
    return 1 if any(r.status == "fail" for r in reports) else 0


def _paddle_mode() -> bool:
    from harness import paddle_compat

    return paddle_compat.is_active()


def _durations_path(args, project):
    from pathlib import Path

    if args.durations:
        return Path(args.durations)
    return project.durations_path()
