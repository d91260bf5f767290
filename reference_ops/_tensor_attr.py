"""Attrs that Paddle also takes as tensors (``ScaleTensor``, ``AxisTensor``,
``ShapeTensor``/``ShapeTensorList``, ``StartsTensor``, ``Min``/``Max``, ``Seed``, ...).

Not an op module (no ``_op.py`` suffix). A kernel asks for the tensor's value; when the
dispensable input is absent the attr is used, as in Paddle. Where such a tensor decides an
output's shape, infer_shape leaves those dims unknown (-1) and the kernel sets them.
"""
from __future__ import annotations

from opkit import enforce, errors

__all__ = ["scalar_input", "int_list_input", "given", "add_shape_tensor_inputs",
           "infer_creation_shape", "creation_shape"]


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


# -- the output shape of the creation ops (fill_constant, uniform_random, gaussian_random) ----
def add_shape_tensor_inputs(maker) -> None:
    maker.add_input("ShapeTensor", "(Tensor<int32|int64>, optional) The output shape, 1-D; it "
                    "takes priority over Input(ShapeTensorList) and attr shape."
                    ).as_dispensable()
    maker.add_input("ShapeTensorList", "(vector<Tensor<int>>, optional) The output shape, one "
                    "tensor of shape [1] per dimension; it takes priority over attr shape."
                    ).as_duplicable().as_dispensable()


def infer_creation_shape(ctx, op_name: str) -> list:
    """Out's dims at infer_shape: the attr's, or -1s (of the known rank) when the shape comes
    from a tensor."""
    if given(ctx, "ShapeTensor"):
        dims = list(ctx.get_input_dim("ShapeTensor"))
        return [-1] * int(dims[0]) if len(dims) == 1 and int(dims[0]) >= 0 else None
    if given(ctx, "ShapeTensorList"):
        return [-1] * len(ctx.input_names("ShapeTensorList"))
    shape = [int(d) for d in ctx.attr("shape")]
    for i, d in enumerate(shape):
        enforce(d >= 0, errors.InvalidArgument(
            "Attr(shape) of %s should have non-negative dims, but shape[%d] = %d (shape %s).",
            op_name, i, d, shape))
    return shape


def creation_shape(ctx, op_name: str) -> tuple:
    """Out's shape in the kernel: ShapeTensor, else ShapeTensorList, else attr shape."""
    shape = int_list_input(ctx, "ShapeTensor", "ShapeTensorList", ctx.attr("shape"))
    shape = [int(d) for d in shape]
    enforce(all(d >= 0 for d in shape), errors.InvalidArgument(
        "the shape of %s's output should have non-negative dims, but it is %s.", op_name,
        shape))
    return tuple(shape)
