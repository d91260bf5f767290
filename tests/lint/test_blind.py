"""The blind set (tests/lint_fixtures/blind): op files written before the rules were
extended for their forms (issue 26). Every violation found on its marked line and nothing
else; the correct-but-suspicious files stay quiet."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1] / "lint_fixtures" / "blind"
_spec = importlib.util.spec_from_file_location("blind_score", HERE / "score.py")
score = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(score)

BAD = sorted((HERE / "bad").glob(score.PATTERN))
GOOD = sorted((HERE / "good").glob(score.PATTERN))


def test_the_set_is_big_enough():
    assert len(BAD) >= 15 and len(GOOD) >= 15
    assert all(len(score.expected(p)) == 1 for p in BAD)
    assert not any(score.expected(p) for p in GOOD)


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_violation_found_on_its_line(path):
    assert score.findings(path) == score.expected(path)


@pytest.mark.parametrize("path", GOOD, ids=[p.stem for p in GOOD])
def test_correct_file_is_quiet(path):
    assert score.findings(path) == []
