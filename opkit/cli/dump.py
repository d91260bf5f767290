"""`opkit dump [-o FILE] [--ops MODULE_OR_PATH ...]`: op descriptions of every registered op.

The op-description JSON (Paddle's print_op_desc.py format, see docs/compat.md), sorted and byte-identical
across runs.  Exit 0, or 2 (one line) when an op module cannot be loaded or FILE cannot
be written.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from opkit.cli.config import add_ops_option

EXIT_CODES = {0: "written", 2: "usage error (an op module cannot be loaded, FILE cannot be "
                                "written, a bad [tool.opkit])"}


def add_arguments(parser) -> None:
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write to FILE instead of standard output")
    add_ops_option(parser)
    parser.add_argument("--format", choices=("text", "json"), default="json",
                        help="the dump is JSON either way (the op-description format); "
                             "'text' is accepted like every command's, with a note")


def _write(path: str, text: str) -> None:
    from opkit.cli.config import UsageError

    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise UsageError(f"-o {path}: is a directory")
    if not parent.is_dir():
        raise UsageError(f"-o {path}: directory '{parent}' does not exist")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise UsageError(f"-o {path}: cannot write: {exc.strerror or exc}") from None


def run(args) -> int:
    from opkit.cli.config import load_op_modules

    load_op_modules(args.ops)
    from opkit.op_desc import dumps_op_descs

    text = dumps_op_descs()
    if args.format == "text":
        print("opkit dump: the op descriptions are JSON only (--format text writes JSON too)",
              file=sys.stderr)
    if args.output and args.output != "-":
        _write(args.output, text)
        print(f"opkit dump: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
