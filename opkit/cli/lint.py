"""`opkit lint [PATH ...]`: static checks on op code (see docs/lint.md).

Imports nothing heavy at module level: the checker is loaded inside `run`.
"""
from __future__ import annotations

import sys

FORMATS = ("text", "json", "sarif", "github")
EXIT_CODES = {0: "no findings", 1: "findings (or, with --fix --diff, changes to make)",
              2: "usage error (bad flag, path or [tool.opkit.lint])"}
PYTHON_SUFFIXES = (".py", ".pyi")


def _codes(values: list[str]) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def add_arguments(parser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="Python and C++ files (.py .pyi .cc .cu .h .hpp .cpp .cuh "
                             ".cxx .hh) and folders to check (default: the current folder)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format")
    parser.add_argument("--select", action="append", default=[], metavar="CODES",
                        help="only these rules (comma-separated codes, prefixes or names; repeatable)")
    parser.add_argument("--ignore", action="append", default=[], metavar="CODES",
                        help="skip these rules (comma-separated; repeatable)")
    parser.add_argument("--fix", action="store_true", help="rewrite what can be fixed safely")
    parser.add_argument("--diff", action="store_true",
                        help="with --fix: print the changes as a unified diff instead of "
                             "writing them (exit 1 when there are changes)")
    parser.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                        help="worker processes (default: automatic, 1 for few files)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write .opkit_cache/lint")
    parser.add_argument("--isolated", action="store_true",
                        help="ignore [tool.opkit.lint] in pyproject.toml")


def run(args) -> int:
    from opkit.cli.config import load_config
    from opkit.cli.config import UsageError

    from checkers.lint.config import ConfigError, build_config
    from checkers.lint.cpp import SUFFIXES as CPP_SUFFIXES
    from checkers.lint.files import PathProblem

    if args.jobs is not None and args.jobs < 0:
        raise UsageError("--jobs must be a non-negative number")
    if args.diff and not args.fix:
        raise UsageError("--diff goes with --fix (opkit lint --fix --diff shows the changes "
                         "without writing them)")
    from pathlib import Path

    for p in args.paths:
        if Path(p).is_file() and not p.lower().endswith(PYTHON_SUFFIXES + CPP_SUFFIXES):
            raise UsageError(f"{p}: not a Python file or C++ source (opkit lint checks "
                             f"{', '.join(PYTHON_SUFFIXES + CPP_SUFFIXES)} files)")
    table, source = ({}, None) if args.isolated else load_config("lint")
    try:
        config = build_config(table, source, select=_codes(args.select), ignore=_codes(args.ignore),
                              jobs=args.jobs, no_cache=args.no_cache)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if args.isolated:
        from pathlib import Path

        config.root = Path.cwd()

    from checkers.lint.report import render
    from checkers.lint.runner import lint_paths

    try:
        result = lint_paths(args.paths, config, fix=args.fix, diff=args.diff)
    except PathProblem as exc:
        raise UsageError(str(exc)) from None
    if args.diff:
        for text in result.diffs:
            (sys.stdout if args.format == "text" else sys.stderr).write(text)
        if result.diffs:
            print(f"opkit lint: {len(result.diffs)} file(s) would change (nothing written)",
                  file=sys.stderr)
    elif result.fixed:
        print(f"opkit lint: fixed {len(result.fixed)} file(s): {', '.join(result.fixed)}",
              file=sys.stderr)
    if not (args.diff and result.diffs and not result.findings and args.format == "text"):
        render(args.format, result.findings, result.files, sys.stdout)
    return 1 if result.findings or (args.diff and result.diffs) else 0
