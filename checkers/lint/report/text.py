"""`--format text`: path:line:col, rule, message, the source line and a caret.

Coloured with rich on a terminal; plain when not a TTY or when NO_COLOR is set.
"""
from __future__ import annotations

import os
from functools import lru_cache


def _printable(line: str) -> str:
    """The line safe to print: control characters and undecodable bytes escaped (`\\x00`,
    `\\xff`), never raw bytes on the user's terminal."""
    if line.isprintable():
        return line
    return "".join(c if c.isprintable() or c == "\t" else
                   (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") for c in line)


@lru_cache(maxsize=64)
def _lines(path: str) -> list[str]:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    text = data.decode("utf-8", errors="backslashreplace")
    return [_printable(line.rstrip("\r")) for line in text.split("\n")]


def _source(path: str, line: int) -> str | None:
    lines = _lines(path)
    return lines[line - 1] if 0 < line <= len(lines) else None


def _summary(findings: list, files: int) -> str:
    if not findings:
        return f"All clear: {files} file{'s' if files != 1 else ''} checked."
    paths = len({f.path for f in findings})
    fixable = sum(f.fixable for f in findings)
    extra = f" ({fixable} fixable with --fix)" if fixable else ""
    return (f"Found {len(findings)} problem{'s' if len(findings) != 1 else ''} in {paths} "
            f"file{'s' if paths != 1 else ''}{extra}; {files} checked.")


def render(findings: list, files: int, stream) -> None:
    color = hasattr(stream, "isatty") and stream.isatty() and not os.environ.get("NO_COLOR")
    if color:
        _render_rich(findings, files, stream)
        return
    for f in findings:
        stream.write(f"{f.path}:{f.line}:{f.col}: {f.rule} {f.name} {f.message}\n")
        src = _source(f.path, f.line)
        if src is not None:
            stream.write(f"    {src}\n    {' ' * _caret_col(src, f.col)}^\n")
    stream.write(_summary(findings, files) + "\n")


def _caret_col(src: str, col: int) -> int:
    return min(max(col - 1, 0), len(src))


def _render_rich(findings: list, files: int, stream) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(file=stream, highlight=False, soft_wrap=True)
    for f in findings:
        console.print(f"[bold]{escape(f.path)}[/]:{f.line}:{f.col}: [bold red]{f.rule}[/] "
                      f"[magenta]{f.name}[/] {escape(f.message)}")
        src = _source(f.path, f.line)
        if src is not None:
            console.print(f"    [dim]{escape(src)}[/]")
            console.print(f"    {' ' * _caret_col(src, f.col)}[bold red]^[/]")
    console.print(("[green]" if not findings else "[red]") + escape(_summary(findings, files)) + "[/]")
