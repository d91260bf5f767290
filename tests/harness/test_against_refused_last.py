"""`against`: a derived case that one side refuses is not judged, wherever it comes in the
list. The last case being such a refusal once made the check fail with the message "skip"."""
from __future__ import annotations

import numpy as np

from harness import options
from harness.backend.case import Case, Derived
from harness.checks.values import against
from harness.backend.context import CheckContext


def _verdict(monkeypatch, answers):
    """The check's verdict on relu's case, with each case's judgement taken from `answers`
    in turn (None: agree, "skip": refused by one side, text: a disagreement)."""
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    case = Case("TestRelu", "relu", {"X": x}, {}, {"Out": np.maximum(x, 0)},
                reference=lambda ins, attrs: {"Out": np.maximum(ins["X"], 0)})
    it = iter(answers)
    monkeypatch.setattr(against.AgainstCheck, "_one",
                        lambda self, c, dtype, other, seed, label, own, skipped:
                        next(it, None))
    options.use(options.current().replace(against="paddle"))
    try:
        ctx = CheckContext(places=("CPU",), dtypes=("float64",))
        return list(against.CHECK.verdict(Derived("case", case, case), ctx))
    finally:
        options.use(None)


def test_a_refusal_as_the_last_case_is_not_a_failure(monkeypatch):
    (result,) = _verdict(monkeypatch, [None] + ["skip"] * 1000)
    assert result.status == "pass", result.message
    assert result.message.startswith("1 case(s) agree with paddle")


def test_a_disagreement_before_a_refusal_still_fails(monkeypatch):
    (result,) = _verdict(monkeypatch, [None, "opkit 1 and paddle 2 differ at [0]", "skip"])
    assert result.status == "fail" and "differ at [0]" in result.message
