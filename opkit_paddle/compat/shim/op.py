"""`op` of opkit's Paddle-compatibility mode: Paddle's test-side `Operator` factory.

`Operator("scale", X="x", Out="out", scale=2.0)` builds the opkit op of that name: keywords
that are input or output slots of the op's proto name scope variables (a string or a list
of strings), the others are attrs (an attr the op does not declare is dropped, as Paddle's
OpDescCreationMethod does). `.run(scope, place)` runs it on a `paddle.base.core.Scope`.
An op opkit does not have skips the test with the reason; so does every Operator with the
Paddle backend (its scope is then Paddle's own: the mode gives OpTest checks only).
"""
from __future__ import annotations

import unittest

from harness.backend.dispatch import selected
from opkit.framework.operator import create_op
from opkit.registry import all_op_types, has_op, op_info

__all__ = ["Operator", "OperatorFactory"]


def _scope_of(scope):
    return getattr(scope, "_scope", scope)


class _Op:
    def __init__(self, op):
        self._op = op
        self.type = op.type

    def run(self, scope, place):
        self._op.run(_scope_of(scope), place)

    def input(self, slot):
        return self._op.input_list(slot)

    def output(self, slot):
        return self._op.output_list(slot)

    def attr(self, name):
        return self._op.attr(name)

    def __repr__(self):
        return f"<opkit op {self._op!r}>"


def _has_kernel(op_type: str, dtype: str) -> bool:
    return any(dtype in ds for ds in op_info(op_type).kernel_places().values())


def _low_precision(dtype) -> str:
    """The float16 / bfloat16 skip reason for a dtype attr value (a name or Paddle's
    VarType number: FP16 4, BF16 22), or ''."""
    if dtype is None or isinstance(dtype, bool):
        return ""
    text = str(getattr(dtype, "name", dtype)).lower()
    if text in ("bfloat16", "uint16", "bf16") or dtype == 22:
        return "bfloat16: the op has no bfloat16 kernel in opkit"
    if text in ("float16", "fp16") or dtype == 4:
        return "float16: the op has no float16 kernel in opkit"
    return ""


class OperatorFactory:
    def __call__(self, op_type, *args, **kwargs):
        if args:
            raise ValueError("Operator takes only keyword arguments (slot or attr names)")

        if selected() == "paddle":
            raise unittest.SkipTest(
                f"op.Operator({op_type!r}).run(scope, place): Paddle's own test helper runs "
                "the kernel on a Scope outside any OpTest check; with the Paddle backend the "
                "mode gives OpTest checks only")
        if not has_op(op_type):
            raise unittest.SkipTest(f"op.Operator({op_type!r}): opkit has no op {op_type!r}")
        for key in ("dtype", "out_dtype", "in_dtype"):
            reason = _low_precision(kwargs.get(key))
            if reason and not _has_kernel(op_type, reason.split(":")[0]):
                raise unittest.SkipTest(f"op.Operator({op_type!r}, {key}=...): {reason}")
        proto = op_info(op_type).proto
        ins = {v.name for v in proto.inputs} if proto is not None else set()
        outs = {v.name for v in proto.outputs} if proto is not None else set()
        declared = {a.name for a in proto.attrs} if proto is not None else None
        inputs, outputs, attrs = {}, {}, {}
        for key, value in kwargs.items():
            if key in ins:
                inputs[key] = value
            elif key in outs:
                outputs[key] = value
            elif declared is None or key in declared:
                attrs[key] = value
        return _Op(create_op(op_type, inputs, outputs, attrs))

    def types(self):
        return all_op_types()


Operator = OperatorFactory()
