"""`opkit compat OLD.json NEW.json`: the incompatible changes from OLD to NEW.

Exit 0 compatible, 1 breaking changes, 2 unreadable input (one line: file and JSON path).
Imports only `checkers.compat` (pure JSON), never numpy or the framework.
"""
from __future__ import annotations

import sys

from opkit.cli.config import add_format_option

EXIT_CODES = {0: "compatible", 1: "breaking changes",
              2: "usage error (unreadable input: one line naming the file and JSON path)"}


def add_arguments(parser) -> None:
    parser.add_argument("old", metavar="OLD.json",
                        help="op descriptions before the change (opkit dump or Paddle's "
                             "print_op_desc.py; .gz accepted)")
    parser.add_argument("new", metavar="NEW.json", help="op descriptions after the change")
    parser.add_argument("--allow", metavar="FILE",
                        help="approved breaks (TOML or JSON: op, kind, name, reason, expires)")
    add_format_option(parser)


def run(args) -> int:
    from checkers.compat import DescError, compare_files, render_json, render_text
    from opkit.cli.main import UsageError

    try:
        report = compare_files(args.old, args.new, args.allow)
    except DescError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        sys.stdout.write(render_json(report))
    else:
        render_text(report, args.old, args.new, sys.stdout)
    sys.stdout.flush()
    return 1 if report.breaking else 0
