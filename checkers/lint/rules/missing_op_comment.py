"""OPK008 missing-op-comment."""
from __future__ import annotations

import libcst as cst

from checkers.lint.astutil import argument, calls_in, string_value
from checkers.lint.index import method
from checkers.lint.rules.base import Example, Report, Rule

_HEAD = "from opkit import OpMaker\n\n"


class MissingOpComment(Rule):
    code = "OPK008"
    name = "missing-op-comment"
    summary = 'an `OpMaker` without an `add_comment`, or with an empty one'
    triggers = ('OpMaker',)
    rationale = (
        "`add_comment(text)` is the op's documentation, with its formula; a maker without one "
        "(or with a blank one) leaves the op undocumented. A `make` that calls `super().make()` "
        "is not reported (the parent may add the comment); a comment held in a variable counts."
    )
    VALID = [
        _HEAD + "class ReluOpMaker(OpMaker):\n    def make(self):\n        self.add_input('X', 'in')\n"
                "        self.add_comment(r'Relu. $$Out = \\max(X, 0)$$')\n",
        _HEAD + "DOC = 'Gelu activation.'\n\nclass GeluOpMaker(OpMaker):\n    def make(self):\n"
                "        self.add_comment(DOC)\n",
    ]
    INVALID = [
        Example(_HEAD + "class ReluOpMaker(OpMaker):\n    def make(self):\n        self.add_input('X', 'in')\n", line=3),
        Example(_HEAD + "class ReluOpMaker(OpMaker):\n    def make(self):\n        self.add_comment('  ')\n", line=5),
    ]

    def check(self, ctx):
        index = ctx.index
        for cls in index.classes.values():
            if not index.is_maker(cls):
                continue
            make = method(cls, "make")
            if make is None:
                continue
            comments, super_make = [], False
            for call in calls_in(make):
                func = call.func
                if isinstance(func, cst.Attribute):
                    if func.attr.value == "add_comment":
                        comments.append(call)
                    elif func.attr.value == "make" and isinstance(func.value, cst.Call) \
                            and isinstance(func.value.func, cst.Name) and func.value.func.value == "super":
                        super_make = True
            if super_make:
                continue
            if not comments:
                yield Report(cls.name, f"OpMaker '{cls.name.value}' has no add_comment(...) in make()")
                continue
            for call in comments:
                arg = argument(call, 0, "comment")
                text = string_value(arg) if arg is not None else ""
                if text is not None and not text.strip():
                    yield Report(call, f"OpMaker '{cls.name.value}' has an empty add_comment(...)")
