"""The Rule base class: a code, a name, examples that double as tests and docs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterator

import libcst as cst

from checkers.lint.catalog import RULES, may_apply


@dataclass(frozen=True)
class Example:
    code: str
    path: str = "example.py"  # some rules look at the file name


@dataclass
class Report:
    node: cst.CSTNode
    message: str
    fix: cst.CSTNode | None = None  # replacement for `node`, when safely fixable


class Rule:
    code: ClassVar[str]
    fixable: ClassVar[bool] = False
    rationale: ClassVar[str] = ""
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []

    @classmethod
    def name(cls) -> str:
        return RULES[cls.code][0]

    @classmethod
    def summary(cls) -> str:
        return RULES[cls.code][1]

    def applies(self, ctx) -> bool:
        """Cheap pre-check (see catalog.TRIGGERS): can this file have findings at all?"""
        return may_apply(self.code, ctx.filename, ctx.text)

    def check(self, ctx) -> Iterator[Report]:  # pragma: no cover - abstract
        raise NotImplementedError


def as_example(example) -> Example:
    return example if isinstance(example, Example) else Example(example)
