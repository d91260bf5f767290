"""The sweep's shipped classification file (benchmarks/paddle_sweep_triage.json) loads, and
every bug it cites is a row of docs/paddle.md's bug table with the same grade and
reproducer, the reproducer a file under examples/paddle_bugs/. A bug id cited by a cause
but missing from the table, a grade that differs from the table's, or a reproducer path that
does not exist fails here. Runs without Paddle."""
from __future__ import annotations

import re

from opkit_paddle.sweep.triage import load

from paddle_backend_helpers import ROOT

TRIAGE = ROOT / "benchmarks" / "paddle_sweep_triage.json"


def _table() -> dict[str, tuple[str, str]]:
    """docs/paddle.md's bug table: row id -> (grade, reproducer path or '')."""
    rows = {}
    for line in (ROOT / "docs" / "paddle.md").read_text().splitlines():
        m = re.match(r"^\| (\d+b?) \| (bug, public API|crash on invalid input|contract "
                     r"difference|not a bug) \|.*?(examples/paddle_bugs/\S+\.py)? \|$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3) or "")
    return rows


def test_the_shipped_triage_loads_and_names_each_kind():
    triage = load(TRIAGE)
    kinds = {("bug" if c.bug else "contract" if c.contract else "false_alarm")
             for c in triage.causes}
    assert kinds == {"bug", "contract", "false_alarm"}


def test_every_bug_of_the_triage_is_a_graded_row_with_its_reproducer():
    triage = load(TRIAGE)
    table = _table()
    cited = {c.bug for c in triage.causes if c.bug}
    assert cited <= set(triage.bugs)
    for key, bug in triage.bugs.items():
        assert key in table, f"bug {key} is not a row of docs/paddle.md's table"
        grade, reproducer = table[key]
        assert bug["grade"] == grade, (key, bug["grade"], grade)
        assert bug["reproducer"] == reproducer, (key, bug["reproducer"], reproducer)
        assert (ROOT / reproducer).is_file(), reproducer
