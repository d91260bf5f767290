"""Every rule's own VALID and INVALID examples (they are also docs/rules.md): an INVALID
example is reported by its rule only, at the lines it names, and rewritten by `--fix` into
exactly the code it gives (or left alone, when it gives none); a VALID one is quiet."""
from __future__ import annotations

import pytest

from checkers.lint.rules import ALL_RULES, CATALOG_RULES
from checkers.lint.rules.base import as_example
from .helpers import lint

CASES = [(rule, kind, i, as_example(ex)) for rule in CATALOG_RULES
         for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID))
         for i, ex in enumerate(examples)]


@pytest.mark.parametrize("rule,kind,i,example", CASES,
                         ids=[f"{r.code}-{k}-{i}" for r, k, i, _ in CASES])
def test_example(rule, kind, i, example, tmp_path):
    path = example.path
    if example.files:  # a project: the example's file beside the modules it imports
        for rel, text in example.files:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
        (tmp_path / example.path).write_text(example.code)
        path = str(tmp_path / example.path)
    result = lint(example.code, path, dedent=False, fix=rule.fixable,
                  **{k.replace("-", "_"): v for k, v in example.config})
    findings = result.findings
    found = {f.rule for f in findings}
    if kind == "invalid":
        assert found == {rule.code}, findings
        assert example.lines, f"{rule.code} INVALID[{i}] names no line"
        assert tuple(sorted(f.line for f in findings)) == example.lines, findings
        if rule.fixable:
            assert result.fixed == example.fixed, result.fixed
    else:
        assert rule.code not in found, findings
        assert "OPK000" not in found, findings
        assert result.fixed is None


def test_every_rule_has_examples_and_metadata():
    codes = [rule.code for rule in CATALOG_RULES]
    assert codes == sorted(set(codes))
    for rule in CATALOG_RULES:
        assert rule.VALID and rule.INVALID, rule.code
        assert rule.rationale and rule.summary and rule.name, rule.code
        if rule in ALL_RULES:
            assert rule.triggers, rule.code
        if rule.fixable:
            assert any(as_example(ex).fixed for ex in rule.INVALID), rule.code
