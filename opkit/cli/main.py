"""Entry point of the `opkit` command.

Each subcommand lives in its own module `opkit.cli.<name>` with two functions:
``add_arguments(parser)`` and ``run(args) -> int``. Only the module of the command
being run is imported, so `opkit lint` on one file never pays for numpy or the registry.
"""
from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = {
    "lint": ("opkit.cli.lint", "static checks on Python files and folders"),
    "test": ("opkit.cli.test", "run every harness check for ops"),
    "dump": ("opkit.cli.dump", "op descriptions of every registered op, as JSON"),
    "compat": ("opkit.cli.compat", "incompatible changes between two op-description files"),
    "ops": ("opkit.cli.ops", "the registered ops and their kernels"),
}

USAGE_ERROR = 2


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opkit",
        description="Build a deep-learning op, prove it right, keep it from breaking.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join(f"  {n:<8} {d}" for n, (_, d) in COMMANDS.items()),
    )
    parser.add_argument("command", nargs="?", help="one of: " + ", ".join(COMMANDS))
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        _top_parser().print_help()
        return 0 if argv else USAGE_ERROR
    if argv[0] == "--version":
        from opkit.version import __version__

        print(f"opkit {__version__}")
        return 0
    name = argv[0]
    if name not in COMMANDS:
        parser = _top_parser()
        parser.print_usage(sys.stderr)
        print(f"opkit: error: unknown command {name!r} (choose from {', '.join(COMMANDS)})",
              file=sys.stderr)
        return USAGE_ERROR
    module_name, description = COMMANDS[name]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"opkit {name}", description=description)
    module.add_arguments(parser)
    try:
        args = parser.parse_args(argv[1:])
    except SystemExit as exc:  # argparse: --help exits 0, bad flags exit 2
        return int(exc.code or 0)
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        print("opkit: interrupted", file=sys.stderr)
        return 130
    except UsageError as exc:
        print(f"opkit {name}: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:  # `opkit ops | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2, never a traceback."""


if __name__ == "__main__":  # `python -m opkit.cli.main`: use the module's own classes
    from opkit.cli.main import main as _main

    sys.exit(_main())
