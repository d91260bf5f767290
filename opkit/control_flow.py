"""Control flow for programs: the `While` helper that builds a `while` op and its sub-block.

    i = layers.fill_constant([1], "int64", 0)
    n = layers.fill_constant([1], "int64", 10)
    cond = layers.less_than(i, n)
    loop = While(cond)
    with loop.block():
        ...                                   # ops appended here go to the sub-block
        layers.increment(i, in_place=True)
        layers.less_than(i, n, cond=cond)     # update the condition, or the loop never ends
"""
from __future__ import annotations

import contextlib

from opkit.framework import errors
from opkit.framework.program import default_main_program, unique_name

__all__ = ["While"]


class While:
    """`while cond: <ops of the block>`; `cond` is a bool variable of shape [1] that the
    block must update."""

    def __init__(self, cond, is_test: bool = False, name: str | None = None):
        if getattr(cond, "dtype", None) != "bool":
            raise errors.InvalidArgument("While: the condition '%s' must be a bool variable, "
                                         "got dtype %s", getattr(cond, "name", cond),
                                         getattr(cond, "dtype", None))
        shape = getattr(cond, "shape", None)
        if shape is not None and len(shape) and [d for d in shape if d != 1 and d >= 0]:
            raise errors.InvalidArgument("While: the condition '%s' must hold one element, "
                                         "got shape %s", cond.name, shape)
        self.cond = cond
        self.is_test = bool(is_test)
        self.name = name or unique_name("while")

    @contextlib.contextmanager
    def block(self):
        program = default_main_program()
        parent = program.current_block()
        sub = program.create_block()
        try:
            yield sub
        finally:
            program.rollback()
        self._append_while(parent, sub)

    def _append_while(self, parent, sub) -> None:
        written: list[str] = []
        reads: list[str] = []
        for op in sub.ops:
            for n in op.input_arg_names():
                if n not in written and n not in reads:
                    reads.append(n)
            for n in op.output_arg_names():
                if n not in written:
                    written.append(n)
        outer = [n for n in reads if n not in sub.vars and parent.has_var(n)]
        outs = [n for n in written if n not in sub.vars and parent.has_var(n)]
        step_scopes = parent.create_var(name=f"{self.name}.step_scopes", type="step_scopes",
                                        dtype=None)
        parent.append_op("while", inputs={"X": outer, "Condition": self.cond},
                         outputs={"Out": outs, "StepScopes": step_scopes},
                         attrs={"sub_block": sub, "is_test": self.is_test})
