"""OPK009 analysis-stopped, for C++: regions tree-sitter could not parse (off by default)."""
from __future__ import annotations

from checkers.lint.cpp.base import CppRule, cpp_example

_ON = (("notes", True),)


class CppAnalysisStopped(CppRule):
    code = "OPK009"
    name = "analysis-stopped"
    summary = "a note (off by default): a region of a C++ file that tree-sitter could not parse"
    rationale = (
        "tree-sitter parses without the preprocessor, so a macro used where the grammar expects "
        "something else (a statement without `;`, a declaration-like macro) becomes an error "
        "region it recovers around. The rules see nothing inside such a region. Off by default; "
        "`notes = true` or `--select OPK009` lists each region's first line, so a quiet run is "
        "not mistaken for a checked one."
    )
    VALID = [cpp_example('void f() {\n  int x = 1;\n}\n', config=_ON)]
    INVALID = [cpp_example('void f() {\n  int x = 1;\n  x = = 2;\n}\n', line=3, config=_ON)]
