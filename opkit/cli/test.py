"""`opkit test`: every harness check for ops, a table per op (or JSON).

    opkit test clip relu            the named ops (exit 2 if one is unknown or has no OpTest)
    opkit test --all                every registered forward op (no OpTest: reported as skip)
    opkit test                      every op that the discovered OpTests cover
Exit status: 0 every check passed (or skipped), 1 a check failed, 2 usage error.
"""
from __future__ import annotations

import json
import os
import sys

from opkit.cli.config import add_format_option, add_ops_option, load_op_modules

DEFAULT_SEED = 2024


def add_arguments(parser) -> None:
    parser.add_argument("op", nargs="*", help="op types to test")
    parser.add_argument("--all", action="store_true", help="test every registered op")
    add_ops_option(parser)
    parser.add_argument("--tests", action="append", default=[], metavar="PATH",
                        help="test files or folders holding OpTest classes (repeatable; "
                             "default: [tool.opkit] tests)")
    add_format_option(parser)
    parser.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                        help="run N cases at a time (pytest-xdist workers when it is "
                             "installed, else forked worker processes)")
    parser.add_argument("--no-xdist", action="store_true",
                        help="with --jobs: use opkit's own fork pool, not pytest-xdist")
    parser.add_argument("--shard", metavar="K/N", help="run only the K-th of N slices of the "
                        "ops (1 <= K <= N), for a CI matrix")
    from harness.fuzz import DEFAULT_FUZZ

    parser.add_argument("--fuzz", type=int, default=DEFAULT_FUZZ, metavar="N",
                        help=f"draw N generated cases per OpTest, with the input variants "
                             f"applied (check 'fuzz'; default {DEFAULT_FUZZ}, 0: off)")
    parser.add_argument("--seed", type=int, default=None,
                        help=f"seed of every random generator (default {DEFAULT_SEED}, or "
                             f"$OPKIT_SEED)")
    parser.add_argument("--checks", metavar="NAMES",
                        help="comma-separated subset of checks (default: all)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="time limit per check (default 120; 0: none)")
    parser.add_argument("--place", choices=["CPU", "GPU", "all"], default=None,
                        help="places to run on (default all)")
    parser.add_argument("--dtype", choices=["float32", "float64", "all"], default=None,
                        help="float dtypes to run (default all)")
    parser.add_argument("--no-isolate", action="store_true",
                        help="run the checks in this process (no crash isolation)")


def _usage(msg: str):
    from opkit.cli.main import UsageError

    return UsageError(msg)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise _usage(f"--shard {text!r}: expected K/N, e.g. 2/4") from None
    if n < 1 or not 1 <= k <= n:
        raise _usage(f"--shard {text!r}: need 1 <= K <= N")
    return k, n


def shard(ops: list[str], spec: tuple[int, int] | None) -> list[str]:
    """The K-th of N round-robin slices of the sorted ops (stable across machines)."""
    if spec is None:
        return ops
    k, n = spec
    return [op for i, op in enumerate(sorted(ops)) if i % n == k - 1]


def forward_op_types() -> list[str]:
    from opkit.registry import all_op_types

    types = all_op_types()
    known = set(types)
    return [t for t in types if not (t.endswith("_grad") and t[: -len("_grad")] in known)]


def run(args) -> int:
    from harness import settings
    from harness.checks.registry import check_names

    seed = args.seed if args.seed is not None else int(os.environ.get("OPKIT_SEED",
                                                                       DEFAULT_SEED))
    if args.jobs < 1:
        raise _usage("--jobs must be >= 1")
    if args.fuzz < 0:
        raise _usage("--fuzz must be >= 0")
    spec = parse_shard(args.shard)
    checks = None
    if args.checks:
        checks = [c.strip() for c in args.checks.split(",") if c.strip()]
        unknown = [c for c in checks if c not in check_names()]
        if unknown:
            raise _usage(f"--checks: unknown check(s) {', '.join(unknown)} "
                         f"(known: {', '.join(check_names())})")
    if args.place or args.dtype:
        settings.configure(args.place, args.dtype)
        if args.place:
            os.environ["OPKIT_PLACE"] = args.place
        if args.dtype:
            os.environ["OPKIT_DTYPE"] = args.dtype

    load_op_modules(args.ops)
    from opkit.registry import has_op, op_info

    for op in args.op:
        if not has_op(op):
            try:
                op_info(op)
            except Exception as exc:  # NotFound with the close names
                raise _usage(str(exc).split("NotFound: ")[-1]) from None

    from harness.discovery import discover, test_paths

    paths = test_paths(args.tests)
    discovery = discover(paths, seed=seed)
    for problem in discovery.problems:
        print(f"opkit test: warning: {problem}", file=sys.stderr)
    by_op = discovery.by_op()
    for t in discovery.tests:
        if not t.op_type:
            print(f"opkit test: warning: {t.source}: no op_type after setUp"
                  + (f" ({t.error})" if t.error else ""), file=sys.stderr)

    if args.all:
        ops = forward_op_types()
        ops += [op for op in by_op if op not in ops and has_op(op)]
    elif args.op:
        ops = list(dict.fromkeys(args.op))
        missing = [op for op in ops if op not in by_op]
        if missing:
            where = ", ".join(str(p) for p in paths) or "(no test paths)"
            raise _usage(f"no OpTest found for op{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(repr(m) for m in missing)} under {where}")
    else:
        ops = sorted(op for op in by_op)
        if not ops:
            where = ", ".join(str(p) for p in paths) or "(no test paths)"
            raise _usage(f"no OpTest found under {where}; name ops, use --all or --tests")
        unregistered = [op for op in ops if not has_op(op)]
        for op in unregistered:
            print(f"opkit test: warning: OpTest(s) for unregistered op '{op}' "
                  f"(load it with --ops)", file=sys.stderr)
    ops = shard(ops, spec)

    print(f"opkit test: seed {seed} (reproduce with --seed {seed})", file=sys.stderr)
    from harness.run import DEFAULT_TIMEOUT, plan, run_ops
    from harness.table import progress, render

    timeout = DEFAULT_TIMEOUT if args.timeout is None else (args.timeout or None)
    tasks, _ = plan(ops, by_op, args.fuzz, checks)
    with progress(len(tasks), "opkit test", enabled=args.all or len(tasks) > 4) as advance:
        reports = run_ops(ops, by_op, checks=checks, seed=seed, timeout=timeout,
                          jobs=args.jobs, isolate=not args.no_isolate, fuzz=args.fuzz,
                          progress=advance, xdist=not args.no_xdist, op_modules=args.ops,
                          test_paths=paths)
    if args.format == "json":
        doc = {"ops": [r.to_json() for r in reports], "seed": seed}
        print(json.dumps(doc, indent=1))
    else:
        render(reports, seed=seed)
    return 1 if any(r.status == "fail" for r in reports) else 0
