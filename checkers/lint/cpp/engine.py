"""Lint one C++ file's bytes: parse once with tree-sitter, run the C++ rules, collect findings.

Never raises for any input: problems with the file itself become OPK000 findings.
"""
from __future__ import annotations

import re

from checkers.lint.catalog import rule_name
from checkers.lint.findings import Finding

# `// opkit: ignore`, `// opkit: ignore[OPK002]`, `/* opkit: ignore[empty-enforce-message] */`,
# matched in comment tokens only
SUPPRESS = re.compile(r"opkit:\s*ignore\b(?:\[([A-Za-z0-9_,\s-]*)\])?")


def lint_cpp(path: str, data: bytes, config) -> list:
    """The findings of one C++ file (checkers.lint.engine.lint_source wraps them)."""
    try:
        return _lint(path, data, config)
    except RecursionError:
        return [_finding(path, 1, 1, "OPK000", "code too deeply nested to analyse")]
    except Exception as exc:  # noqa: BLE001 - the linter must never crash on input
        return [_finding(path, 1, 1, "OPK000", f"internal error while analysing the "
                                               f"file: {type(exc).__name__}: {exc}")]


def _finding(path, line, col, code, message) -> Finding:
    return Finding(path, max(1, line), max(1, col), code, rule_name(code), message)


def _lint(path: str, data: bytes, config) -> list:
    from checkers.lint.cpp.parse import CppFile, GrammarMissing
    from checkers.lint.cpp.rules import CPP_RULES
    from checkers.lint.cpp.unparseable import MAX_ERROR_SHARE

    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        return [_finding(path, line, 1, "OPK000", "not C++ source: the file contains NUL bytes")]
    rules = [rule() for rule in CPP_RULES if rule.code in config.select]
    rules = [rule for rule in rules if rule.applies(data)]
    notes = "OPK009" in config.select
    if not rules and not notes and "OPK000" not in config.select:
        return []  # nothing to look for: not even parsed
    try:
        cpp = CppFile(path, data)
    except GrammarMissing as exc:
        return [_finding(path, 1, 1, "OPK000", str(exc))]
    cpp.config = config
    findings = []
    if cpp.root is None:
        return [_finding(path, 1, 1, "OPK000", "tree-sitter could not parse the file")]
    if cpp.root.has_error:
        share = _error_share(cpp)
        if share > MAX_ERROR_SHARE:
            first = cpp.error_lines[0] if cpp.error_lines else 1
            findings.append(_finding(path, first, 1, "OPK000",
                                     f"unparseable C++: tree-sitter could not fit {share:.0%} of "
                                     f"the file's text into C++ constructs (first error at line {first}); the rest was checked"))
        if notes:
            for line in cpp.error_lines:
                findings.append(_finding(path, line, 1, "OPK009",
                                         "tree-sitter could not parse this region (a macro the "
                                         "grammar cannot read?): no rule looked inside it"))
    reports = []
    for rule in rules:
        try:
            reports.extend((rule, report) for report in rule.check(cpp))
        except RecursionError:
            return [_finding(path, 1, 1, "OPK000", "code too deeply nested to analyse")]
        except Exception as exc:  # noqa: BLE001
            findings.append(_finding(path, 1, 1, "OPK000",
                                     f"internal error in {rule.code}: {type(exc).__name__}: {exc}"))
    ignored = suppressions(cpp) if reports or findings else {}
    for rule, report in reports:
        line, col = cpp.position(report.node)
        last = report.node.end_point[0] + 1
        if any(_suppressed(ignored, n, rule.code, rule.name) for n in range(line, last + 1)):
            continue
        findings.append(Finding(path, line, col, rule.code, rule.name, report.message))
    findings = [f for f in findings if f.rule not in ("OPK000", "OPK009")
                or not _suppressed(ignored, f.line, f.rule, f.name)]
    return sorted(set(findings))


def _error_share(cpp) -> float:
    """The share of the file's bytes in tokens tree-sitter could not fit into any construct
    (the leaves directly under ERROR nodes; what it did structure inside them counts as parsed)."""
    total = max(1, len(cpp.data.strip()))
    loose = 0
    for node in cpp.error_nodes:
        loose += sum(c.end_byte - c.start_byte for c in node.children
                     if c.child_count == 0 and c.type != "comment")
    return loose / total


def suppressions(cpp) -> dict[int, frozenset]:
    """line -> the codes ignored there (`{"*"}` for all), from comment tokens."""
    out: dict[int, frozenset] = {}
    if b"opkit:" not in cpp.data:
        return out
    from checkers.lint.cpp.parse import text

    for comment in cpp.comments():
        match = SUPPRESS.search(text(comment))
        if not match:
            continue
        codes = frozenset({"*"}) if match.group(1) is None else frozenset(
            c.strip().upper() for c in match.group(1).split(",") if c.strip())
        for line in range(comment.start_point[0] + 1, comment.end_point[0] + 2):
            out[line] = out.get(line, frozenset()) | codes
    return out


def _suppressed(table: dict, line: int, code: str, name: str) -> bool:
    codes = table.get(line)
    return bool(codes) and ("*" in codes or code in codes or name.upper() in codes)
