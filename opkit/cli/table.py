"""The `opkit test` report: one table per op (check x place x dtype: pass/fail/skip, worst
error), failures and skip reasons below it. Rich on a terminal, plain text when standard
output is not a TTY or NO_COLOR is set. A progress bar (stderr) for long runs."""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections import Counter

from harness.backend.dispatch import kernel_functions
from harness.judging.unconfirmed import unconfirmed_lines
from harness.reporting.messages import group_failures
from harness.checks.catalog import all_checks, check_names
from harness.reporting.report import FAIL, PASS, SKIP, UNCONFIRMED
from harness.reporting.rootcause import denest

COLUMNS = [("CPU", "float32"), ("CPU", "float64"), ("GPU", "float32"), ("GPU", "float64")]
PARTIAL = "pass*"   # a cell that passed without judging values its check judges elsewhere
_RANK = {FAIL: 4, UNCONFIRMED: 3, PASS: 2, SKIP: 1, None: 0}
_STYLE = {PASS: "green", FAIL: "bold red", SKIP: "yellow", UNCONFIRMED: "magenta",
          PARTIAL: "cyan"}


def plain_output(stream=None) -> bool:
    stream = stream or sys.stdout
    return bool(os.environ.get("NO_COLOR")) or not getattr(stream, "isatty", lambda: False)()


def grid(report) -> tuple[list[str], dict]:
    """(check names in order, {(check, place, dtype): status}) plus worst errors."""
    order = {n: i for i, n in enumerate(check_names() + ["fuzz"])}
    checks = sorted({r.check for r in report.results}, key=lambda c: (order.get(c, 999), c))
    cells, worst = {}, {}
    failed = {r.check for r in report.results if r.status == FAIL}
    # a result that names no place (or dtype) stands for the places that ran: without a
    # GPU, a check that is not place-specific is no pass (or fail) on the GPU
    # (a place "ran" when a check executed the op there: one with a dtype; a static check
    # such as dtypes' kernel registry passes on a GPU that cannot run)
    ran = {r.place for r in report.results if r.place and r.dtype and r.status != SKIP}
    kernels = _kernel_columns(report.op)
    no_kernel: set[str] = set()
    unjudged: dict[tuple, set] = {}     # (check, place, dtype) -> what no pass there judged
    for r in report.results:
        # a failing check's worst error is its failures' (a pass's 0 is not the answer)
        if r.worst_error is not None and (r.check not in failed or r.status == FAIL):
            worst[r.check] = max(worst.get(r.check, 0.0), r.worst_error)
        for place, dtype in COLUMNS:
            if not r.place and not ran and kernels is not None and \
                    (place, dtype) not in kernels:
                no_kernel.add(f"{place} {dtype}")
                continue    # nothing ran and the op has no kernel there: not its verdict
            if r.place in (None, "", place) and r.dtype in (None, "", dtype) and \
                    (not ran or place in ran or (r.place and r.status != PASS)):
                key = (r.check, place, dtype)
                if r.status == PASS:
                    left = {w.strip() for w in r.not_judged.split(",") if w.strip()}
                    unjudged[key] = unjudged.get(key, left) & left
                if _RANK[r.status] > _RANK[cells.get(key)]:
                    cells[key] = r.status
    # a pass that left out values the check judges elsewhere is no plain pass of them
    partial = {key: ", ".join(sorted(left, key=lambda w: (w != "output values", w)))
               for key, left in unjudged.items() if left and cells.get(key) == PASS}
    for key in partial:
        cells[key] = PARTIAL
    return checks, {"cells": cells, "worst": worst, "partial": partial,
                    "no_kernel": [f"{p} {d}" for p, d in COLUMNS if f"{p} {d}" in no_kernel]}


def _kernel_columns(op: str) -> set | None:
    """{(place, dtype)} the op has kernels for (None: not known here)."""
    try:
        from harness.backend.dispatch import kernel_places

        return {(p, d) for p, dtypes in kernel_places(op).items() for d in dtypes}
    except Exception:  # noqa: BLE001 - an op this process does not know: every column
        return None


def legend(g) -> list[str]:
    """The `pass*` cells' legend: per check, what its passes there did not judge."""
    by_check: dict[tuple, list[str]] = {}
    for (check, place, dtype), left in g.get("partial", {}).items():
        by_check.setdefault((check, left), []).append(f"{place} {dtype}")
    lines = [f"{PARTIAL} {check} [{', '.join(wheres)}]: passed without judging {left} there "
             f"({check} judges them elsewhere; a cell reads `pass` only for what it judged)"
             for (check, left), wheres in by_check.items()]
    if g.get("no_kernel"):
        lines.append(f"n/a [{', '.join(g['no_kernel'])}]: the op has no kernel there, and no "
                     "check ran it: `-`, not a verdict")
    return lines


def _details(report) -> list[tuple[str, str]]:
    """(status, line) for every failure, each distinct skip reason and the notes a check
    with `notes_on_pass` gives on a pass."""
    lines = [(FAIL, line) for line in group_failures(
        report.results, order=check_names() + ["fuzz"],
        op_type=report.op, kernels=kernel_functions)]
    lines += [(UNCONFIRMED, line) for line in unconfirmed_lines(report.results)]
    ran = {r.check for r in report.results if r.status != SKIP}
    cases_of: dict[str, set] = {}   # check -> every case it has a result for
    for r in report.results:
        cases_of.setdefault(r.check, set()).add(r.case)
    # reason -> check -> (skipped cases, places/dtypes), in order of first appearance
    by_reason: dict[str, dict[str, tuple[list, list]]] = {}
    for r in report.results:
        if r.status == SKIP and r.message:
            cases, wheres = by_reason.setdefault(r.message, {}).setdefault(r.check, ([], []))
            where = "/".join(x for x in (r.place, r.dtype) if x)
            if r.case not in cases:
                cases.append(r.case)
            if where and where not in wheres:
                wheres.append(where)
    for reason, checks in by_reason.items():
        # a check that also ran elsewhere says where it was skipped (so the note agrees
        # with a pass in the table): the place, else the skipped cases
        labels: dict[str, list[str]] = {}
        for check, (cases, wheres) in checks.items():
            named = [c for c in cases if c]
            if wheres or set(cases) >= cases_of[check]:
                named = []          # a place skipped (a column of the table), or every case
            parts = [] if check not in ran else \
                named[:4] + ([f"+{len(named) - 4} more"] if len(named) > 4 else []) + wheres
            labels.setdefault(f"[{', '.join(parts)}] " if parts else "", []).append(check)
        # one line per label, the label first: "skip [GPU] output, grad: ..." (a label
        # after the names read as the last name's only)
        for label, names in labels.items():
            lines.append((SKIP, f"skip {label}{', '.join(names)}: {denest(reason)}"))
    # what a check found on a pass, for checks that say so (`Check.notes_on_pass`:
    # `coincidences` names the relations it found and broke)
    noted = {c.name for c in all_checks() if c.notes_on_pass}
    for r in report.results:
        if r.status == PASS and r.message and r.check in noted:
            lines.append((PASS, f"note {r.check} [{r.case}]: {r.message}"))
    return lines


def _cases(rep) -> int:
    return len([c for c in rep.cases if not c.startswith("fuzz(")])


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# why a check was skipped, in a few words (the first that matches its reasons; `-v` and the
# table's skip lines give each reason in full)
SKIP_KINDS = (("needs a GPU", ("gpu not usable", "no gpu kernel", "cupy is not")),
              ("a random op", ("a random op",)),
              ("needs a reference()", ("defines no reference", "no reference()")),
              ("the op refuses it on purpose", ("refuses",)),
              ("turned off", ("turned off", "not selected", "opkit_skip")),
              ("not supported by the backend", ("backend",)))
NOT_APPLICABLE = "nothing of its kind in this op"


def skip_kind(reasons) -> str:
    """A skipped check's reason in a few words (SKIP_KINDS), from its skip messages."""
    said = [reason.lower() for reason in reasons]
    for kind, words in SKIP_KINDS:
        if any(text.startswith(w) or f" {w}" in text or f": {w}" in text
               for text in said for w in words):
            return kind
    return NOT_APPLICABLE


def skipped_summary(results, skipped) -> str:
    """`skipped 10: 9 nothing of its kind in this op (distribution, ...), 1 needs a GPU
    (places); -v: each reason`: the skipped checks grouped by why."""
    reasons: dict[str, list[str]] = {}
    for r in results:
        if r.status == SKIP and r.check in skipped and r.message:
            reasons.setdefault(r.check, []).append(r.message)
    groups: dict[str, list[str]] = {}
    for check in skipped:
        groups.setdefault(skip_kind(reasons.get(check, [])), []).append(check)
    parts = [f"{len(names)} {kind} ({', '.join(names)})"
             for kind, names in sorted(groups.items(), key=lambda g: -len(g[1]))]
    return f"skipped {len(skipped)}: {'; '.join(parts)}; -v: each reason"


def one_line(rep) -> str:
    """The compact line of a passing, skipped or exempt op."""
    if getattr(rep, "exempt", ""):
        return f"{rep.op}: EXEMPT ({rep.exempt})"
    checks = sorted({r.check for r in rep.results if r.status == PASS})
    skipped = sorted({r.check for r in rep.results if r.status == SKIP} - set(checks))
    text = f"{rep.op}: {rep.status.upper()} ({_plural(_cases(rep), 'case')}"
    if checks:
        text += f", {_plural(len(checks), 'check')} passed"
    if skipped:
        text += f", {skipped_summary(rep.results, skipped)}"
    text += ")"
    if rep.status == UNCONFIRMED:
        n = len({r.check for r in rep.results if r.status == UNCONFIRMED})
        text += f" - {_plural(n, 'check')} unconfirmed, not failed (harness.judging.unconfirmed)"
    if rep.note:
        text += f" - {rep.note}"
    elif rep.status == SKIP:
        reason = next((r.message for r in rep.results if r.message), "")
        text += f" - {reason}" if reason else ""
    return text


def _worst(g, check) -> str:
    """The worst error cell: blank for a failing check whose failures measured none (a
    shape, LoD or raised failure), never the 0 of its passing places."""
    value = g["worst"].get(check)
    if value is None or value == 0 and any(s == FAIL for (c, _, _), s in g["cells"].items()
                                           if c == check):
        return ""
    return f"{value:.3g}"


def render(reports, seed=None, stream=None, verbose=False, notes=(), plain=None) -> None:
    """Compact by default: one line per passing/skipped op, a full table per failing op
    (every table with `verbose`), then `notes` and the summary line. Rich on a terminal,
    plain text otherwise (`plain`: force either)."""
    stream = stream or sys.stdout
    plain = plain_output(stream) if plain is None else plain
    if plain:
        def say(text="", style="", **_):
            print(text, file=stream)
    else:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        console = Console(file=stream)

        def say(text="", style="", **kw):
            console.print(text, style=style, **(kw or {"markup": False, "highlight": False}))
    for rep in reports:
        if not verbose and rep.status != FAIL:
            say(one_line(rep), _STYLE.get(rep.status, ""))
            for line in unconfirmed_lines(rep.results) if rep.status == UNCONFIRMED else []:
                say("  " + line, _STYLE[UNCONFIRMED])
            continue
        checks, g = grid(rep)
        rows = [[c] + [g["cells"].get((c, p, d)) or "-" for p, d in COLUMNS] +
                [_worst(g, c)] for c in checks]
        if plain:
            say(f"{rep.op}: {rep.status.upper()} ({_plural(_cases(rep), 'case')})"
                + (f" - {rep.note}" if rep.note else ""))
            header = ["check"] + [f"{p} {d}" for p, d in COLUMNS] + ["worst error"]
            widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
            for row in [header] + rows:
                say("  " + "  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip())
        else:
            title = Text(f"{rep.op} ", style="bold")
            title.append(rep.status.upper(), style=_STYLE.get(rep.status, ""))
            title.append(f"  ({_plural(_cases(rep), 'case')})")
            if rep.note:
                title.append(f"  {rep.note}", style="yellow")
            table = Table(title=title, title_justify="left")
            table.add_column("check", style="bold")
            for p, d in COLUMNS:
                table.add_column(f"{p}\n{d}", justify="center")
            table.add_column("worst error", justify="right")
            for check, *cells, worst in rows:
                table.add_row(check, *(Text(x, style=_STYLE.get(x, "dim")) for x in cells),
                              worst)
            console.print(table)
        for line in legend(g):
            say("  " + line, _STYLE[PARTIAL])
        for status, line in _details(rep):
            say("  " + line, {FAIL: "red", UNCONFIRMED: "magenta"}.get(status, "yellow"))
        say()
    for text in notes:
        say(text, "yellow")
    failed = any(r.status == FAIL for r in reports)
    say(summary_line(reports, seed), "bold red" if failed else "bold green", markup=None,
        highlight=None)


def render_plain(reports, seed=None, stream=None, verbose=False, notes=()) -> None:
    render(reports, seed, stream, verbose, notes, plain=True)


def summary_line(reports, seed=None) -> str:
    exempt = sum(1 for r in reports if getattr(r, "exempt", ""))
    n = Counter(r.status for r in reports if not getattr(r, "exempt", ""))
    text = f"{_plural(len(reports), 'op')}: {n[PASS]} passed, {n[FAIL]} failed, " \
           f"{n[SKIP]} skipped"
    if n[UNCONFIRMED]:
        text += f", {n[UNCONFIRMED]} unconfirmed"
    if exempt:
        text += f", {exempt} exempt"
    return text + (f" (seed {seed})" if seed is not None else "")


HEARTBEAT_S = 3.0


def progress_line(description: str, done: int, total: int, unit: str, failed: int,
                  elapsed: float) -> str:
    """ "opkit test: 54/443 <unit> done, 3 with a failure, 120s, about 14m left": the time
    left is the elapsed time per unit done times the units left (none before the first)."""
    left = ""
    if 0 < done < total:
        secs = elapsed / done * (total - done)
        left = f", about {secs / 60:.0f}m left" if secs >= 90 else f", about {secs:.0f}s left"
    return (f"{description}: {done}/{total} {unit} done, {failed} with a failure, "
            f"{elapsed:.0f}s{left}")


@contextlib.contextmanager
def heartbeat(total: int, description: str = "opkit test", every: float = HEARTBEAT_S,
              unit: str = "tasks"):
    """Off a terminal: a progress line (`progress_line`) on stderr every `every` seconds
    (also while a slow case runs). Written with os.write from a thread: no Python-level lock
    is held that a forked worker could inherit. `advance(failed=False)` counts one unit."""
    done, failed_count = [0], [0]
    stop = threading.Event()
    started = time.monotonic()

    def beat():
        while not stop.wait(every):
            line = progress_line(description, done[0], total, unit, failed_count[0],
                                 time.monotonic() - started) + "\n"
            try:
                os.write(2, line.encode())
            except OSError:
                return

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()

    def advance(*_, failed: bool = False):
        done[0] += 1
        failed_count[0] += bool(failed)

    try:
        yield advance
    finally:
        stop.set()
        thread.join(1)


@contextlib.contextmanager
def progress(total: int, description: str = "opkit test", enabled: bool = True,
             unit: str = "tasks"):
    """A progress bar on stderr when it is a terminal, else a heartbeat line every few
    seconds ("54/443 <unit> done"); yields `advance()`."""
    if not enabled or total <= 1:
        yield lambda *_, **__: None
        return
    if plain_output(sys.stderr):
        with heartbeat(total, description, unit=unit) as advance:
            yield advance
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task(f"{description} ({unit.split(' (')[0]})", total=total)
        yield lambda *_, **__: bar.advance(task)
