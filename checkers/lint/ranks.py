"""Ranks an op's code asserts: `enforce_eq(len(ctx.get_input_dim("X")), 2, ...)`,
`enforce(len(x_dims) == 2 and ..., ...)` in `infer_shape`; `enforce_eq(x.ndim, 2, ...)`,
`assert len(x.shape) == 2` in a kernel. Used by the dataflow to tell a row (a view) from an
element (a scalar)."""
from __future__ import annotations

import libcst as cst

from checkers.lint.astutil import argument, suite_statements
from checkers.lint.index import ModuleIndex, method


def equalities(call_kind: str | None, call: cst.Call):
    """(left, right) pairs an enforce call asserts equal."""
    if call_kind == "enforce_eq":
        a, b = argument(call, 0, "a"), argument(call, 1, "b")
        if a is not None and b is not None:
            yield a, b
    elif call_kind == "enforce":
        cond = argument(call, 0, "condition")
        if cond is not None:
            yield from condition_equalities(cond)


def condition_equalities(expr):
    """(left, right) of every `a == b` joined by `and` in a condition."""
    if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.And):
        yield from condition_equalities(expr.left)
        yield from condition_equalities(expr.right)
    elif isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1 \
            and isinstance(expr.comparisons[0].operator, cst.Equal):
        yield expr.left, expr.comparisons[0].comparator


def integer(expr) -> int | None:
    return int(expr.value, 0) if isinstance(expr, cst.Integer) else None


def rank_pair(left, right):
    """(expression whose rank is stated, rank) for `len(E) == N` / `E.ndim == N` either way."""
    for subject, value in ((left, right), (right, left)):
        n = integer(value)
        if n is None:
            continue
        if isinstance(subject, cst.Call) and isinstance(subject.func, cst.Name) \
                and subject.func.value == "len" and len(subject.args) == 1:
            return ("len", subject.args[0].value), n
        if isinstance(subject, cst.Attribute) and subject.attr.value == "ndim":
            return ("ndim", subject.value), n
    return None


def _dim_slot(index: ModuleIndex, expr, aliases: dict) -> str | None:
    """The slot of `ctx.get_input_dim(S)`, `list(...)`/`tuple(...)` of it, or an alias."""
    if isinstance(expr, cst.Name):
        return aliases.get(expr.value)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value in ("list", "tuple") and len(expr.args) == 1:
            return _dim_slot(index, expr.args[0].value, aliases)
        if isinstance(func, cst.Attribute) and func.attr.value == "get_input_dim" and expr.args:
            slot = index.strings(expr.args[0].value)
            return slot if isinstance(slot, str) else None
    return None


def infer_shape_ranks(index: ModuleIndex, ops) -> dict:
    """slot -> rank stated by the infer_shape of the op classes registered for `ops`."""
    out: dict[str, int] = {}
    conflicts: set[str] = set()
    for reg in index.operator_regs:
        if reg.op not in ops:
            continue
        cls_expr = argument(reg.call, 1, "op_class")
        cls = index.classes.get(cls_expr.value) if isinstance(cls_expr, cst.Name) else None
        func = method(cls, "infer_shape") if cls is not None else None
        if func is None:
            continue
        aliases: dict[str, str] = {}
        for stmt in suite_statements(func.body):  # top-level statements only: unconditional
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name):
                    slot = _dim_slot(index, small.value, aliases)
                    name = small.targets[0].target.value
                    if slot is not None:
                        aliases[name] = slot
                    else:
                        aliases.pop(name, None)
                elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    call = small.value
                    for left, right in equalities(index.call_kind(call), call):
                        pair = rank_pair(left, right)
                        if pair is None or pair[0][0] != "len":
                            continue
                        slot = _dim_slot(index, pair[0][1], aliases)
                        if slot is None:
                            continue
                        if out.get(slot, pair[1]) != pair[1]:
                            conflicts.add(slot)
                        out[slot] = pair[1]
    return {k: v for k, v in out.items() if k not in conflicts}
