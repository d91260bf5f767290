"""Every C++ rule's own VALID and INVALID examples (they are also docs/rules.md): an INVALID
example is reported by its rule only, at the lines it names; a VALID one is quiet."""
from __future__ import annotations

import pytest

from checkers.lint.cpp.rules import CPP_CATALOG, CPP_RULES
from checkers.lint.rules import CATALOG_RULES
from .helpers import lint

CASES = [(rule, kind, i, ex) for rule in CPP_CATALOG
         for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID))
         for i, ex in enumerate(examples)]


@pytest.mark.parametrize("rule,kind,i,example", CASES,
                         ids=[f"cpp-{r.code}-{k}-{i}" for r, k, i, _ in CASES])
def test_cpp_example(rule, kind, i, example):
    assert example.path.endswith((".cc", ".cu", ".h"))
    findings = lint(example.code, example.path, dedent=False, **dict(example.config)).findings
    found = {f.rule for f in findings}
    if kind == "invalid":
        assert found == {rule.code}, findings
        assert example.lines, f"{rule.code} INVALID[{i}] names no line"
        assert tuple(sorted(f.line for f in findings)) == example.lines, findings
    else:
        assert rule.code not in found, findings
        assert "OPK000" not in found, findings


def test_cpp_rules_mirror_python_codes_and_names():
    python = {rule.code: rule.name for rule in CATALOG_RULES}
    for rule in CPP_CATALOG:
        assert python[rule.code] == rule.name, rule.code
        assert rule.VALID and rule.INVALID and rule.rationale and rule.summary, rule.code
    for rule in CPP_RULES:
        assert rule.triggers, rule.code
