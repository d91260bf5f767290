"""The C++ rule base class. Each C++ rule carries the code and name of the Python rule it
mirrors (same code where the rule is the same), its own summary and rationale, and VALID /
INVALID C++ examples that are its tests (tests/lint/test_cpp_examples.py) and its docs
(docs/rules.md, `python -m checkers.lint.docs`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterator


@dataclass(frozen=True)
class Example:
    """Like checkers.lint.rules.base.Example (which imports libcst: the C++ path does not)."""
    code: str
    path: str = "example.cc"
    line: int | tuple | None = None  # INVALID: the line(s) reported (a test asserts them)
    config: tuple = ()  # [tool.opkit.lint] settings the example is linted with
    fixed: None = None  # no C++ rule rewrites code
    files: tuple = ()

    @property
    def lines(self) -> tuple:
        if self.line is None:
            return ()
        return tuple(self.line) if isinstance(self.line, tuple) else (self.line,)


def cpp_example(code: str, line=None, path: str = "example.cc", config: tuple = ()) -> Example:
    return Example(code, path=path, line=line, config=config)


@dataclass
class Report:
    node: object  # a tree-sitter node: the finding is at its first line
    message: str


class CppRule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line: what it finds in C++
    rationale: ClassVar[str] = ""
    triggers: ClassVar[tuple] = ()  # byte strings one of which a file must contain
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []

    def applies(self, data: bytes) -> bool:
        """Cheap pre-check before the file is parsed, never the decision itself."""
        return any(t in data for t in self.triggers)

    def check(self, cpp) -> Iterator[Report]:  # pragma: no cover - abstract
        raise NotImplementedError
