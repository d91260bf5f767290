"""OPK000 syntax-error, for C++: a file that cannot be analysed at all."""
from __future__ import annotations

from checkers.lint.cpp.base import CppRule, cpp_example

# more of the file than this in tree-sitter ERROR nodes: unparseable (still checked for the rest)
MAX_ERROR_SHARE = 0.5


class CppUnparseable(CppRule):
    code = "OPK000"
    name = "syntax-error"
    summary = ("a C++ file that is not text, or more than half of whose text tree-sitter cannot "
               "fit into any C++ construct")
    rationale = (
        "tree-sitter recovers from what it cannot parse (most often a macro used as a statement "
        "or a declaration), so a partly parsed file is checked everywhere it did parse; that is "
        "not reported (`notes = true` lists the regions, OPK009). A file with NUL bytes (not "
        "source), one tree-sitter gives up on, or one more than half of whose bytes fall in "
        "unparsed regions is reported, with the reason and the first unparsed line, and what "
        "did parse is still checked."
    )
    VALID = [cpp_example('#define DECLARE_OP(name) class name##Op {}\nDECLARE_OP(Relu);\n'
                         'int f(int x) { return x; }\n')]
    INVALID = [cpp_example('PADDLE_ENFORCE ] ] ] ) ) ) : : : ? ? ? ] ] ] ) ) ) : : :\n', line=1)]
