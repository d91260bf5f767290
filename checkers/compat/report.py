"""Render a CompatReport: text grouped by op (rich colors on a terminal) or JSON."""
from __future__ import annotations

import json
import os
import sys
from itertools import groupby
from typing import TextIO

from .compare import CompatReport


def render_json(report: CompatReport) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False, allow_nan=True) + "\n"


def _groups(entries: list[dict]):
    ordered = sorted(entries, key=lambda e: e["op"] or "")
    return [(op, list(items)) for op, items in groupby(ordered, key=lambda e: e["op"])]


def _ops(n: int) -> str:
    return f"{n} op{'' if n == 1 else 's'}"


def _lines(report: CompatReport, old_label: str, new_label: str) -> list[tuple[str, str]]:
    """(style, text) pairs; style is a rich style or '' for plain."""
    out: list[tuple[str, str]] = [
        ("bold", f"opkit compat: {old_label} ({_ops(report.old_ops)}) -> "
                 f"{new_label} ({_ops(report.new_ops)})")]
    sections = (("Breaking changes", report.breaking, "bold red", "red"),
                ("Approved breaks (--allow)", report.allowed, "bold yellow", "yellow"),
                ("Notes", report.notes, "bold cyan", "cyan"))
    for title, entries, head_style, kind_style in sections:
        if not entries:
            continue
        out.append(("", ""))
        out.append((head_style, f"{title} ({len(entries)}):"))
        for op, items in _groups(entries):
            out.append(("bold", f"  {op or '(saved programs)'}"))
            for e in items:
                text = f"    {e['kind']}: {e['message']}"
                if "reason" in e:
                    until = f", until {e['expires']}" if e.get("expires") else ""
                    text += f" [approved: {e['reason']}{until}]"
                out.append((kind_style, text))
    out.append(("", ""))
    if report.breaking:
        n_ops = len({e["op"] for e in report.breaking})
        out.append(("bold red", f"incompatible: {len(report.breaking)} breaking change"
                    f"{'s' if len(report.breaking) != 1 else ''} in {n_ops} op"
                    f"{'s' if n_ops != 1 else ''}, {_count(len(report.notes), 'note')}"))
    else:
        extra = f", {len(report.allowed)} approved" if report.allowed else ""
        out.append(("bold green", f"compatible: no breaking changes "
                    f"({_count(len(report.notes), 'note')}{extra})"))
    return out


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def use_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def render_text(report: CompatReport, old_label: str, new_label: str,
                stream: TextIO | None = None, color: bool | None = None) -> None:
    stream = stream or sys.stdout
    lines = _lines(report, old_label, new_label)
    if color is None:
        color = use_color(stream)
    if not color:
        stream.write("\n".join(text for _, text in lines) + "\n")
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, highlight=False, soft_wrap=True, force_terminal=True)
    for style, text in lines:
        console.print(Text(text, style=style or ""))


def text_report(report: CompatReport, old_label: str = "OLD", new_label: str = "NEW") -> str:
    """The plain text report as a string (tests, scripts)."""
    return "\n".join(text for _, text in _lines(report, old_label, new_label)) + "\n"
