"""OPK000 syntax-error: reported by the engine itself, not by a check over the tree."""
from __future__ import annotations

from checkers.lint.rules.base import Example, Rule


class SyntaxErrorRule(Rule):
    code = "OPK000"
    name = "syntax-error"
    summary = "a file that cannot be parsed or analysed (the other files are still checked)"
    rationale = (
        "A file that CPython cannot parse, that is not valid text in its declared encoding, or "
        "that is nested too deeply to analyse. Reported at the offending line; the other "
        "files are still checked. It cannot be suppressed with a comment."
    )
    VALID = [Example("def f(x):\n    return x\n")]
    INVALID = [Example("def f(x):\n    return x +\n", line=2),
               Example("x = 1\nif x\n    pass\n", line=2)]

    def check(self, ctx):  # the engine reports OPK000 before any rule runs
        return iter(())
