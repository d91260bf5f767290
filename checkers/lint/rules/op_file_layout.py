"""OPK006 op-file-layout."""
from __future__ import annotations

from checkers.lint.astutil import UNRESOLVED
from checkers.lint.rules.base import Example, Report, Rule

_HEAD = "from opkit import register_operator\n\n"


def is_grad_op(op: str) -> bool:
    return op.endswith("_grad") or op.endswith("_grad_grad")


class OpFileLayout(Rule):
    code = "OPK006"
    name = "op-file-layout"
    summary = '`<x>_op.py` registers a forward op other than `x`, or more than one forward op'
    triggers = ('register_operator',)
    file_suffix = '_op.py'
    rationale = (
        "One forward op per file, named after it: `<x>_op.py` registers the forward op `x` "
        "and nothing else but its grad ops (an op whose type ends with `_grad` or "
        "`_grad_grad`). Only files named `*_op.py` are checked."
    )
    VALID = [
        Example(_HEAD + "register_operator('relu', object)\nregister_operator('relu_grad', object)\n"
                        "register_operator('relu_grad_grad', object)\n", path="relu_op.py"),
        Example(_HEAD + "register_operator('relu', object)\nregister_operator('gelu', object)\n",
                path="activations.py"),
    ]
    INVALID = [
        Example(_HEAD + "register_operator('gelu', object)\n", path="relu_op.py", line=3),
        Example(_HEAD + "register_operator('relu', object)\nregister_operator('relu6', object)\n",
                path="relu_op.py", line=4),
    ]

    def check(self, ctx):
        expected = ctx.filename[: -len("_op.py")]
        for reg in ctx.index.operator_regs:
            if reg.op is UNRESOLVED or is_grad_op(reg.op) or reg.op == expected:
                continue
            yield Report(reg.call, f"{ctx.filename} registers forward op '{reg.op}'; a file "
                                   f"<x>_op.py holds only the op 'x' ('{expected}') and its grad ops")
