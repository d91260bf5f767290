"""Every rule's own VALID and INVALID examples (they are also docs/rules.md)."""
from __future__ import annotations

import pytest

from checkers.lint.rules import ALL_RULES
from checkers.lint.rules.base import as_example
from .helpers import lint

CASES = [(rule, kind, i, as_example(ex)) for rule in ALL_RULES
         for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID))
         for i, ex in enumerate(examples)]


@pytest.mark.parametrize("rule,kind,i,example", CASES,
                         ids=[f"{r.code}-{k}-{i}" for r, k, i, _ in CASES])
def test_example(rule, kind, i, example):
    findings = lint(example.code, example.path, dedent=False).findings
    found = {f.rule for f in findings}
    if kind == "invalid":
        assert found == {rule.code}, findings
    else:
        assert rule.code not in found, findings
        assert "OPK000" not in found, findings


def test_every_rule_has_examples():
    for rule in ALL_RULES:
        assert rule.VALID and rule.INVALID, rule.code
        assert rule.rationale, rule.code
