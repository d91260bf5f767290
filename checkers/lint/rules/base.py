"""The Rule base class. A rule's metadata (code, name, summary, triggers, rationale, fixable)
lives on its class, with VALID/INVALID examples that double as its tests and its docs;
`checkers/lint/catalog.py`'s tables and docs/rules.md are generated from the classes
(`python -m checkers.lint.docs`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterator

import libcst as cst

from checkers.lint.catalog import may_apply


@dataclass(frozen=True)
class Example:
    code: str
    path: str = "example.py"  # some rules look at the file name
    line: int | tuple | None = None  # INVALID: the line(s) reported (a test asserts them)
    fixed: str | None = None  # INVALID of a fixable rule: the file after `--fix` (None: no fix)
    files: tuple = ()  # other files of the project: ((relative path, text), ...), next to `path`
    config: tuple = ()  # [tool.opkit.lint] settings the example is linted with: (("notes", True),)

    @property
    def lines(self) -> tuple:
        if self.line is None:
            return ()
        return tuple(self.line) if isinstance(self.line, tuple) else (self.line,)


@dataclass
class Report:
    node: cst.CSTNode
    message: str
    fix: cst.CSTNode | None = None  # replacement for `node`, when safely fixable


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, usable in `# opkit: ignore[name]` and `select`
    summary: ClassVar[str]  # one line: what it finds
    triggers: ClassVar[tuple] = ()  # substrings one of which a file must contain to be analysed
    file_suffix: ClassVar[str | None] = None  # only files whose name ends with this
    fixable: ClassVar[bool] = False
    rationale: ClassVar[str] = ""
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []

    def applies(self, ctx) -> bool:
        """Cheap pre-check (see catalog.TRIGGERS): can this file have findings at all?"""
        return may_apply(self.code, ctx.filename, ctx.text)

    def check(self, ctx) -> Iterator[Report]:  # pragma: no cover - abstract
        raise NotImplementedError


def as_example(example) -> Example:
    return example if isinstance(example, Example) else Example(example)
