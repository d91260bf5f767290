"""Entry point of the `opkit` command.

Each subcommand lives in its own module `opkit.cli.<name>` with two functions:
``add_arguments(parser)`` and ``run(args) -> int``, and an ``EXIT_CODES`` table shown by
``--help``. Only the module of the command being run is imported, so `opkit lint` on one
file never pays for numpy or the registry.

Bad input (a bad flag, a bad `[tool.opkit]` entry, an op module that fails to load) is a
usage error: one line on stderr, exit 2, never a traceback; with `--format json` standard
output holds a JSON document `{"error": ..., "exit_code": 2}` as well.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys

from opkit.cli.config import UsageError  # noqa: F401 - raised by the subcommands

COMMANDS = {
    "lint": ("opkit.cli.lint", "static checks on op sources, Python and C++, files and "
                               "folders"),
    "test": ("opkit.cli.test", "run every harness check for ops"),
    "dump": ("opkit.cli.dump", "op descriptions of every registered op, as JSON"),
    "compat": ("opkit.cli.compat", "incompatible changes between two op-description files"),
    "ops": ("opkit.cli.ops", "the registered ops and their kernels"),
    "bench": ("opkit.cli.bench", "per-op forward/backward time, alone or against a ref"),
}

USAGE_ERROR = 2
DEFAULT_EXIT_CODES = {0: "success", 2: "usage error (bad flag, file or configuration)"}


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing and exiting."""

    def error(self, message):
        raise UsageError(message)


def exit_codes_text(codes: dict) -> str:
    return "exit status:\n" + "\n".join(f"  {k}  {v}" for k, v in sorted(codes.items()))


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opkit",
        description="Build a deep-learning op, prove it right, keep it from breaking.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join(f"  {n:<8} {d}" for n, (_, d) in COMMANDS.items())
        + "\n\n'opkit COMMAND --help' describes a command and its exit status.\n\n"
        + exit_codes_text({0: "success", 1: "a check failed (test, lint, compat)",
                           2: "usage error"}),
    )
    parser.add_argument("command", nargs="?", help="one of: " + ", ".join(COMMANDS))
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def _wants_json(argv: list[str]) -> bool:
    for i, a in enumerate(argv):
        if a == "--format=json" or (a == "--format" and argv[i + 1:i + 2] == ["json"]):
            return True
    return False


def _usage_error(name: str, message: str, as_json: bool) -> int:
    prefix = f"opkit {name}" if name else "opkit"
    print(f"{prefix}: error: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message, "exit_code": USAGE_ERROR,
                          "command": name or None}, indent=1))
    return USAGE_ERROR


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        _top_parser().print_help()
        return 0
    if not argv:   # help goes to stderr: this is a usage error, stdout stays clean
        _top_parser().print_help(sys.stderr)
        return USAGE_ERROR
    if argv[0] == "--version":
        from opkit.version import __version__

        print(f"opkit {__version__}")
        return 0
    name = argv[0]
    as_json = _wants_json(argv[1:])
    if name not in COMMANDS:
        _top_parser().print_usage(sys.stderr)
        return _usage_error("", f"unknown command {name!r} (choose from "
                                f"{', '.join(COMMANDS)})", as_json)
    module_name, description = COMMANDS[name]
    module = importlib.import_module(module_name)
    codes = getattr(module, "EXIT_CODES", DEFAULT_EXIT_CODES)
    parser = _Parser(prog=f"opkit {name}", description=description,
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     epilog=exit_codes_text(codes))
    module.add_arguments(parser)
    try:
        try:
            args = parser.parse_args(argv[1:])
        except SystemExit as exc:  # --help (exit 0)
            return int(exc.code or 0)
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        print("opkit: interrupted", file=sys.stderr)
        return 130
    except UsageError as exc:
        return _usage_error(name, str(exc), as_json)
    except BrokenPipeError:  # `opkit ops | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001
        from opkit.plugins import OpPackageError
        from opkit.project import ProjectError

        if isinstance(exc, (ProjectError, OpPackageError)):
            return _usage_error(name, str(exc), as_json)
        raise


if __name__ == "__main__":  # `python -m opkit.cli.main`: use the module's own classes
    from opkit.cli.main import main as _main

    sys.exit(_main())
