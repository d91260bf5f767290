"""`opkit compat OLD.json NEW.json`: the incompatible changes from OLD to NEW.

Exit 0 compatible, 1 breaking changes, 2 unreadable input (one line: file and JSON path).
Imports only `checkers.compat` (pure JSON), never numpy or the framework, unless
`--programs DIR` asks to replay saved programs (checkers.compat.programs, with `--ops`).
"""
from __future__ import annotations

import sys

from opkit.cli.config import add_format_option, add_ops_option

EXIT_CODES = {0: "compatible", 1: "breaking changes",
              2: "usage error (unreadable input: one line naming the file and JSON path)"}


def add_arguments(parser) -> None:
    parser.add_argument("old", metavar="OLD.json",
                        help="op descriptions before the change (opkit dump or Paddle's "
                             "print_op_desc.py; .gz accepted)")
    parser.add_argument("new", metavar="NEW.json", help="op descriptions after the change")
    parser.add_argument("--allow", metavar="FILE",
                        help="approved breaks (TOML or JSON: op, kind, name, reason, expires)")
    parser.add_argument("--require-checkpoints", action="store_true",
                        help="a signature change that no newer op-version checkpoint "
                             "documents is breaking (undocumented-change)")
    parser.add_argument("--programs", metavar="DIR",
                        help="load every saved model under DIR with the current registry "
                             "(upgraders applied), check it against NEW and replay its sample")
    add_ops_option(parser)
    add_format_option(parser)


def run(args) -> int:
    from checkers.compat import (DescError, apply_allow, apply_versions, compare, load_allow,
                                 load_op_descs, render_json, render_text)
    from opkit.cli.config import UsageError

    try:
        old, new = load_op_descs(args.old), load_op_descs(args.new)
        entries = load_allow(args.allow) if args.allow is not None else []
        report = apply_versions(compare(old, new), old, new, args.require_checkpoints)
        if args.programs is not None:   # the only part that loads the framework and ops
            from checkers.compat.programs import check_programs
            from opkit.cli.config import load_op_modules

            load_op_modules(args.ops)
            check_programs(report, new, args.programs, args.new, old)
        if entries:
            apply_allow(report, entries)
    except DescError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        sys.stdout.write(render_json(report))
    else:
        render_text(report, args.old, args.new, sys.stdout)
    sys.stdout.flush()
    return 1 if report.breaking else 0
