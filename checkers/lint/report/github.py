"""`--format github`: GitHub Actions workflow commands, one `::error` line per finding."""
from __future__ import annotations


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(findings: list, files: int, stream) -> None:
    for f in findings:
        stream.write(f"::error file={_prop(f.path)},line={f.line},col={f.col},"
                     f"title={_prop(f'{f.rule} {f.name}')}::{_data(f.message)}\n")
