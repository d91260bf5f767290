"""Lint one file's bytes: decode, parse once, run the applicable rules, collect findings.

Never raises for any input: problems with the file itself become OPK000 findings.
"""
from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field

from checkers.lint.catalog import may_apply, rule_name
from checkers.lint.config import LintConfig
from checkers.lint.findings import Finding
from checkers.lint.source import DecodeProblem, decode
from checkers.lint.suppress import is_suppressed, suppressions

NESTING_MESSAGES = ("too many nested", "too complex", "too many statically nested",
                    "too many levels of indentation", "maximum recursion")


@dataclass
class FileResult:
    findings: list = field(default_factory=list)
    fixed: str | None = None  # the rewritten source, when fixes were asked for and applied
    original: str | None = None
    deps: dict = field(default_factory=dict)  # other files read (imported helpers) -> content hash


def _syntax(path: str, line: int, col: int, message: str) -> Finding:
    return Finding(path, max(1, line), max(1, col), "OPK000", rule_name("OPK000"), message)


def _guard(path: str, text: str):
    """CPython's parser first (C, fast): it is the syntax check, and it refuses nesting that
    would crash libcst's native parser. Returns (finding or None, python_accepts)."""
    try:
        with warnings.catch_warnings():     # the code is only parsed, never run: its
            warnings.simplefilter("ignore", SyntaxWarning)    # invalid escapes etc. are
            warnings.simplefilter("ignore", DeprecationWarning)  # not the linter's output
            compile(text, path, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                    dont_inherit=True)
    except (RecursionError, MemoryError):
        return _syntax(path, 1, 1, "code too deeply nested to analyse"), False
    except SyntaxError as exc:
        msg = str(exc.msg)
        return _syntax(path, exc.lineno or 1, exc.offset or 1, f"syntax error: {msg}"), False
    except ValueError as exc:  # e.g. null bytes
        return _syntax(path, 1, 1, f"syntax error: {exc}"), False
    return None, True


def lint_source(path: str, data: bytes, config: LintConfig, *, fix: bool = False) -> FileResult:
    from checkers.lint.cpp import is_cpp

    if is_cpp(path):  # C++ sources: tree-sitter and the C++ rules (nothing to fix)
        from checkers.lint.cpp.engine import lint_cpp

        return FileResult(lint_cpp(path, data, config))
    try:
        result = _lint(path, data, config, fix)
        result.deps = dependency_hashes(path)
        return result
    except RecursionError:
        return FileResult([_syntax(path, 1, 1, "code too deeply nested to analyse")])
    except Exception as exc:  # noqa: BLE001 - the linter must never crash on input
        return FileResult([_syntax(path, 1, 1, f"internal error while analysing the file: "
                                               f"{type(exc).__name__}: {exc}")])


def _lint(path: str, data: bytes, config: LintConfig, fix: bool) -> FileResult:
    try:
        text = decode(data)
    except DecodeProblem as exc:
        return FileResult([_syntax(path, exc.line, 1, str(exc))])
    problem, _ = _guard(path, text)
    if problem is not None:
        return FileResult([problem])

    filename = path.replace("\\", "/").rsplit("/", 1)[-1]
    if not any(may_apply(code, filename, text) for code in config.select):
        return FileResult([])  # nothing to look for: CPython's parse was the syntax check

    from checkers.lint.rules import ALL_RULES

    probe = _Probe(filename, text)
    rules = [rule() for rule in ALL_RULES if rule.code in config.select]
    rules = [rule for rule in rules if rule.applies(probe)]
    if not rules:
        return FileResult([])  # nothing to look for: CPython's parse was the syntax check

    import libcst as cst

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return FileResult([_syntax(path, exc.raw_line, exc.raw_column + 1,
                                   f"syntax error: {exc.message}")])
    from checkers.lint.context import FileContext

    ctx = FileContext(path, text, module, config)
    from checkers.lint import imports

    imports.reset_used()
    try:
        return _check(path, text, module, ctx, rules, fix)
    finally:
        deps = imports.used_files()
        if deps:
            _DEPS[path] = deps


_DEPS: dict = {}


def dependency_hashes(path: str) -> dict:
    """Content hashes of the project files the last analysis of `path` read."""
    import hashlib
    from pathlib import Path

    out = {}
    for dep in _DEPS.pop(path, ()):
        try:
            out[dep] = hashlib.sha256(Path(dep).read_bytes()).hexdigest()
        except OSError:
            out[dep] = ""
    return out


def _check(path, text, module, ctx, rules, fix) -> FileResult:
    reports = []
    for rule in rules:
        try:
            reports.extend((rule, report) for report in rule.check(ctx))
        except RecursionError:
            return FileResult([_syntax(path, 1, 1, "code too deeply nested to analyse")])
        except Exception as exc:  # noqa: BLE001
            reports.append((None, f"internal error in {rule.code}: {type(exc).__name__}: {exc}"))
    if not reports:
        return FileResult([])
    ignored = suppressions(text)
    findings, fixes = [], {}
    for rule, report in reports:
        if rule is None:
            findings.append(_syntax(path, 1, 1, report))
            continue
        line, col = ctx.position(report.node)
        if is_suppressed(ignored, line, rule.code, rule.name):
            continue
        findings.append(Finding(path, line, col, rule.code, rule.name, report.message,
                                fixable=report.fix is not None))
        if report.fix is not None:
            fixes[id(report.node)] = report.fix
    result = FileResult(sorted(set(findings)))
    if fix and fixes:
        from checkers.lint.fixer import apply_fixes

        new = apply_fixes(module, fixes)
        if new != text:
            result.fixed, result.original = new, text
    return result


class _Probe:
    """What `Rule.applies` may look at before anything is parsed."""

    def __init__(self, filename: str, text: str) -> None:
        self.filename = filename
        self.text = text
