"""A deliberately bad op file is caught, rule by rule, at the right lines."""
from __future__ import annotations

from pathlib import Path

from checkers.lint.config import build_config
from checkers.lint.engine import lint_source

FIXTURE = Path(__file__).resolve().parents[1] / "lint_fixtures" / "relu_op.py"


def test_every_rule_fires_on_the_bad_op_file():
    findings = lint_source("relu_op.py", FIXTURE.read_bytes(), build_config({}, None)).findings
    lines = FIXTURE.read_text().splitlines()
    got = {}
    for f in findings:
        got.setdefault(f.rule, []).append(f.line)
    assert sorted(got) == [f"OPK00{i}" for i in range(1, 9)], findings
    for f in findings:
        if f.rule != "OPK008":
            assert f.rule in lines[f.line - 1], (f, lines[f.line - 1])
