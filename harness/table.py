"""The `opkit test` report: one table per op (check x place x dtype: pass/fail/skip, worst
error), failures and skip reasons below it. Rich on a terminal, plain text when standard
output is not a TTY or NO_COLOR is set. A progress bar (stderr) for long runs."""
from __future__ import annotations

import contextlib
import os
import sys

from harness.report import FAIL, PASS, SKIP

COLUMNS = [("CPU", "float32"), ("CPU", "float64"), ("GPU", "float32"), ("GPU", "float64")]
_RANK = {FAIL: 3, PASS: 2, SKIP: 1, None: 0}
_STYLE = {PASS: "green", FAIL: "bold red", SKIP: "yellow"}


def plain_output(stream=None) -> bool:
    stream = stream or sys.stdout
    return bool(os.environ.get("NO_COLOR")) or not getattr(stream, "isatty", lambda: False)()


def _applies(result, place, dtype) -> bool:
    return (not result.place or result.place == place) and \
        (not result.dtype or result.dtype == dtype)


def grid(report) -> tuple[list[str], dict]:
    """(check names in order, {(check, place, dtype): status}) plus worst errors."""
    from harness.checks.registry import check_names

    order = {n: i for i, n in enumerate(check_names() + ["fuzz"])}
    checks = sorted({r.check for r in report.results}, key=lambda c: (order.get(c, 999), c))
    cells, worst = {}, {}
    for r in report.results:
        if r.worst_error is not None:
            worst[r.check] = max(worst.get(r.check, 0.0), r.worst_error)
        cols = [c for c in COLUMNS if _applies(r, *c)]
        for col in cols:
            key = (r.check, *col)
            if _RANK[r.status] > _RANK[cells.get(key)]:
                cells[key] = r.status
    return checks, {"cells": cells, "worst": worst}


def _details(report) -> list[tuple[str, str]]:
    """(status, line) for every failure and each distinct skip reason."""
    lines, seen = [], set()
    for r in report.results:
        where = "/".join(x for x in (r.place, r.dtype) if x)
        if r.status == FAIL:
            lines.append((FAIL, f"FAIL {r.check}{' ' + where if where else ''}"
                                f"{' [' + r.case + ']' if r.case else ''}: {r.message}"))
    by_reason: dict[str, list[str]] = {}
    for r in report.results:
        if r.status == SKIP and r.message:
            checks = by_reason.setdefault(r.message, [])
            if r.check not in checks:
                checks.append(r.check)
    for reason, checks in by_reason.items():
        lines.append((SKIP, f"skip {', '.join(checks)}: {reason}"))
    return lines


def _fmt_err(value) -> str:
    return "" if value is None else f"{value:.3g}"


def render_plain(reports, seed=None, stream=None) -> None:
    stream = stream or sys.stdout
    for rep in reports:
        checks, g = grid(rep)
        cases = len([c for c in rep.cases if not c.startswith("fuzz(")])
        print(f"{rep.op}: {rep.status.upper()} ({cases} case{'s' if cases != 1 else ''})"
              + (f" - {rep.note}" if rep.note else ""), file=stream)
        header = ["check"] + [f"{p} {d}" for p, d in COLUMNS] + ["worst error"]
        rows = [[c] + [g["cells"].get((c, p, d)) or "-" for p, d in COLUMNS] +
                [_fmt_err(g["worst"].get(c))] for c in checks]
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        for row in [header] + rows:
            print("  " + "  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip(),
                  file=stream)
        for _, line in _details(rep):
            print("  " + line, file=stream)
        print(file=stream)
    _summary(reports, seed, stream, plain=True)


def _summary(reports, seed, stream, plain):
    n = {s: sum(1 for r in reports if r.status == s) for s in (PASS, FAIL, SKIP)}
    text = f"{len(reports)} op{'s' if len(reports) != 1 else ''}: {n[PASS]} passed, " \
           f"{n[FAIL]} failed, {n[SKIP]} skipped" + (f" (seed {seed})" if seed is not None else "")
    if plain:
        print(text, file=stream)
    else:
        from rich.console import Console

        Console(file=stream).print(text, style="bold red" if n[FAIL] else "bold green")


def render_rich(reports, seed=None, stream=None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=stream or sys.stdout)
    for rep in reports:
        checks, g = grid(rep)
        cases = len([c for c in rep.cases if not c.startswith("fuzz(")])
        title = Text(f"{rep.op} ", style="bold")
        title.append(rep.status.upper(), style=_STYLE.get(rep.status, ""))
        title.append(f"  ({cases} case{'s' if cases != 1 else ''})")
        if rep.note:
            title.append(f"  {rep.note}", style="yellow")
        table = Table(title=title, title_justify="left")
        table.add_column("check", style="bold")
        for p, d in COLUMNS:
            table.add_column(f"{p}\n{d}", justify="center")
        table.add_column("worst error", justify="right")
        for c in checks:
            cells = []
            for p, d in COLUMNS:
                status = g["cells"].get((c, p, d))
                cells.append(Text(status or "-", style=_STYLE.get(status, "dim")))
            table.add_row(c, *cells, _fmt_err(g["worst"].get(c)))
        console.print(table)
        for status, line in _details(rep):
            console.print("  " + line, style="red" if status == FAIL else "yellow",
                          markup=False, highlight=False)
        console.print()
    _summary(reports, seed, stream or sys.stdout, plain=False)


def render(reports, seed=None, stream=None) -> None:
    if plain_output(stream):
        render_plain(reports, seed, stream)
    else:
        render_rich(reports, seed, stream)


@contextlib.contextmanager
def progress(total: int, description: str = "opkit test", enabled: bool = True):
    """A progress bar on stderr (only when stderr is a terminal); yields `advance()`."""
    if not enabled or total <= 1 or plain_output(sys.stderr):
        yield lambda *_: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda *_: bar.advance(task)
