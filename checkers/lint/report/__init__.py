"""Report formats: text (rich on a terminal), json, sarif, github."""
from __future__ import annotations

FORMATS = ("text", "json", "sarif", "github")


def render(fmt: str, findings: list, files: int, stream) -> None:
    if fmt == "json":
        from checkers.lint.report.json_format import render as out
    elif fmt == "sarif":
        from checkers.lint.report.sarif import render as out
    elif fmt == "github":
        from checkers.lint.report.github import render as out
    else:
        from checkers.lint.report.text import render as out
    out(findings, files, stream)
