"""The Rule base class: a code, a name, examples that double as tests and docs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterator

import libcst as cst

from checkers.lint.catalog import RULES


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
    #: substrings one of which must occur in a file for the rule to have anything to say;
    #: a cheap pre-check, never the decision itself (that is made on the CST)
    triggers: ClassVar[tuple[str, ...]] = ()
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
        return any(t in ctx.text for t in self.triggers)

    def check(self, ctx) -> Iterator[Report]:  # pragma: no cover - abstract
        raise NotImplementedError


def as_example(example) -> Example:
    return example if isinstance(example, Example) else Example(example)
