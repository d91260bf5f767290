"""Attrs that Paddle also takes as tensors (``ScaleTensor``, ``AxisTensor``,
``ShapeTensor``/``ShapeTensorList``, ``StartsTensor``, ``Min``/``Max``, ``Seed``, ...).

Not an op module (no ``_op.py`` suffix). A kernel asks for the tensor's value; when the
dispensable input is absent the attr is used, as in Paddle. Where such a tensor decides an
output's shape, infer_shape leaves those dims unknown (-1) and the kernel sets them.
"""
from __future__ import annotations

from opkit import enforce, errors

__all__ = ["scalar_input", "int_list_input", "given"]


def given(ctx, slot: str) -> bool:
    """Input ``slot`` is set on the op (compile time or run time)."""
    return bool(ctx.has_input(slot))


def _host(a):
    return a.get() if hasattr(a, "get") else a   # cupy -> numpy


def scalar_input(ctx, slot: str, default=None):
    """The one value held by input ``slot`` (shape [1]) as a Python number, else ``default``."""
    if not ctx.has_input(slot):
        return default
    a = ctx.input(slot)
    if a is None:
        return default
    a = _host(a).reshape(-1)
    enforce(a.size == 1, errors.InvalidArgument(
        "op '%s': Input(%s) should hold exactly one value (shape [1]), but it holds %d",
        ctx.op_type, slot, a.size))
    return a[0].item()


def int_list_input(ctx, tensor_slot: str | None = None, list_slot: str | None = None,
                   default=None):
    """The ints of 1-D input ``tensor_slot``, else one int per tensor of the duplicable input
    ``list_slot`` (each of shape [1]), else ``default`` (the attr's value)."""
    if tensor_slot and ctx.has_input(tensor_slot) and ctx.input(tensor_slot) is not None:
        return [int(v) for v in _host(ctx.input(tensor_slot)).reshape(-1).tolist()]
    if list_slot and ctx.has_input(list_slot):
        out = []
        for i, a in enumerate(ctx.inputs(list_slot)):
            a = _host(a).reshape(-1)
            enforce(a.size == 1, errors.InvalidArgument(
                "op '%s': tensor %d of Input(%s) should hold one value (shape [1]), but it "
                "holds %d", ctx.op_type, i, list_slot, a.size))
            out.append(int(a[0]))
        return out
    return default
