"""The shared --ops/--format options of the commands, over the library's `opkit.project`
(the `[tool.opkit]` loader): its errors become usage errors (exit 2)."""
from __future__ import annotations

from pathlib import Path

from opkit.project import ProjectError, find_pyproject, load_project  # noqa: F401


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2, never a traceback (here,
    below opkit.cli.main, so that the subcommands need not import the module that imports
    them)."""


def load_config(section: str = "", start: Path | None = None) -> tuple[dict, Path | None]:
    """`[tool.opkit.<section>]` (a raw dict for the command owning it) and its file."""
    from opkit.project import load_section

    if not section:
        project = load_project(start)
        return ({"ops": project.ops, "tests": project.tests} if project.path else {},
                project.path)
    return load_section(section, start)


def add_format_option(parser, choices=("text", "json")) -> None:
    parser.add_argument("--format", choices=choices, default="text", help="output format")


def add_ops_option(parser) -> None:
    parser.add_argument("--ops", action="append", default=[], metavar="MODULE_OR_PATH",
                        help="extra op modules, .py files or folders to load (repeatable)")


def load_op_modules(extra: list[str], project=None) -> list[str]:
    """Built-in ops, `[tool.opkit] ops` and `--ops`; see `opkit.project.load_op_modules`."""
    from opkit.project import load_op_modules as load

    return load(extra, project)
