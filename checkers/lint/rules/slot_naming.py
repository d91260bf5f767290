"""OPK007 slot-naming."""
from __future__ import annotations

import re

import libcst as cst

from checkers.lint.astutil import argument, calls_in, string_value
from checkers.lint.rules.base import Example, Report, Rule

UPPER_CAMEL = re.compile(r"[A-Z][A-Za-z0-9]*\Z")
SNAKE = re.compile(r"_*[a-z][a-z0-9]*(_[a-z0-9]+)*\Z")

_HEAD = "from opkit import OpMaker\n\n"


class SlotNaming(Rule):
    code = "OPK007"
    name = "slot-naming"
    summary = 'input/output names not UpperCamelCase, or attr names not snake_case'
    triggers = ('add_input', 'add_output', 'add_attr')
    rationale = (
        "Paddle's conventions, which generated op descriptions and compat checks rely on: "
        "input and output slots are UpperCamelCase (start with an uppercase letter, then "
        "letters and digits only, no underscores: `X`, `Out`, `MaxIndex`, `LR`; all-caps names "
        "are allowed), attributes are snake_case (`use_cudnn`, `x_num_col_dims`). Only string "
        "literals in `add_input`/`add_output`/`add_attr` of an `OpMaker` subclass are checked."
    )
    VALID = [
        _HEAD + "class FcOpMaker(OpMaker):\n    def make(self):\n        self.add_input('X', 'in')\n"
                "        self.add_input('W', 'w')\n        self.add_output('MaxIndex', 'idx')\n"
                "        self.add_attr('x_num_col_dims', 'int', 'dims')\n"
                "        self.add_comment('FC.')\n",
    ]
    INVALID = [
        Example(_HEAD + "class FcOpMaker(OpMaker):\n    def make(self):\n        self.add_input('input_x', 'in')\n"
                "        self.add_comment('FC.')\n", line=5),
        Example(_HEAD + "class FcOpMaker(OpMaker):\n    def make(self):\n        self.add_output('out', 'o')\n"
                "        self.add_comment('FC.')\n", line=5),
        Example(_HEAD + "class FcOpMaker(OpMaker):\n    def make(self):\n"
                "        self.add_attr('numColDims', 'int', 'dims')\n        self.add_comment('FC.')\n", line=5),
    ]

    def check(self, ctx):
        index = ctx.index
        for cls in index.classes.values():
            if not index.is_maker(cls):
                continue
            for call in calls_in(cls):
                func = call.func
                kind = func.attr.value if isinstance(func, cst.Attribute) else None
                if kind not in ("add_input", "add_output", "add_attr"):
                    continue
                arg = argument(call, 0, "name")
                name = string_value(arg) if arg is not None else None
                if name is None:
                    continue
                if kind in ("add_input", "add_output") and not UPPER_CAMEL.match(name):
                    what = "input" if kind == "add_input" else "output"
                    yield Report(arg, f"{what} slot '{name}' is not UpperCamelCase (e.g. "
                                      f"'{_camel(name)}')")
                elif kind == "add_attr" and not SNAKE.match(name):
                    yield Report(arg, f"attr '{name}' is not snake_case (e.g. '{_snake(name)}')")


def _camel(name: str) -> str:
    parts = [p for p in re.split(r"[_@\W]+", name) if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) or "X"


def _snake(name: str) -> str:
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    return re.sub(r"[^A-Za-z0-9_]+", "_", out).lower()

