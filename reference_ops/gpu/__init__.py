"""Dedicated cupy kernels for the reference ops, registered for place "GPU".

Most reference ops run on the GPU through their shared `ctx.xp` kernel (registered for
("CPU", "GPU") in `<op>_op.py`). Where a dedicated kernel matters, it lives here:

| op | kernel |
| --- | --- |
| `elementwise_add` | one `ElementwiseKernel` launch, Y broadcast by Paddle's pre x n x post rule |
| `softmax` | a `RawKernel`, one block per row, fixed reduction tree (deterministic) |
| `sum` | one `RawKernel` launch for all inputs, added left to right (CPU's bits) |
| `concat` | one `RawKernel` launch for all inputs when axis >= 1 |
| `sequence_pool` | one `RawKernel` launch for all sequences (one thread per sequence x column) |

A dedicated kernel is registered only where the op's own file left the (op, "GPU") slot
free (registering the same op, place and dtype twice is an error); otherwise the op keeps
its xp-shared GPU kernel and `SKIPPED[op]` says why. `REGISTERED` lists the ops whose GPU
kernel comes from here.

Importing this package needs no cupy: the CUDA code is compiled on first use.
"""
from __future__ import annotations

from opkit import enforce, errors, register_kernel
from opkit.registry import has_op, kernels_of

from reference_ops._common import normalize_axis
from reference_ops.gpu import kernels

__all__ = ["REGISTERED", "SKIPPED", "kernels"]

REGISTERED: list[str] = []
SKIPPED: dict[str, str] = {}
_DTYPES = ("float32", "float64")


def _dedicated(op_type: str):
    """Register the decorated function as op_type's GPU kernel (float32 and float64) when
    the op exists, as a fallback (priority -1): a GPU kernel of the op's own file (its
    xp-shared kernel) keeps the slot, whichever registers first, and SKIPPED[op] says why."""

    def decorate(fn):
        if not has_op(op_type):
            SKIPPED[op_type] = f"op '{op_type}' is not registered"
            return fn
        register_kernel(op_type, place="GPU", dtypes=_DTYPES, priority=-1)(fn)
        owner = next((e.name for e in kernels_of(op_type).values()
                      if e.place == "GPU" and e.dtype in _DTYPES and e.layout == "ANY"
                      and e.library == "PLAIN" and e.fn is not fn), None)
        if owner is not None:
            SKIPPED[op_type] = f"the GPU slot is taken by the xp-shared kernel {owner}"
            if op_type in REGISTERED:
                REGISTERED.remove(op_type)
            return fn
        if op_type not in REGISTERED:
            REGISTERED.append(op_type)
        SKIPPED.pop(op_type, None)
        return fn

    return decorate


def _y_into_x(x_shape, y_shape, axis) -> bool:
    """Whether Y broadcasts into X's shape by Paddle's axis rule (the dedicated kernel's
    case); a Y of higher rank, or dims that broadcast both ways, go to the shared kernel."""
    from reference_ops._common import elementwise_y_view_shape

    if len(y_shape) > len(x_shape):
        return False
    try:
        view = elementwise_y_view_shape(tuple(x_shape), tuple(y_shape), axis)
    except Exception:  # noqa: BLE001 - the shared kernel raises the op's own error
        return False
    return all(v == 1 or v == d for v, d in zip(view, x_shape))


@_dedicated("elementwise_add")
def elementwise_add_gpu_kernel(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    if x.shape != y.shape and not _y_into_x(x.shape, y.shape, ctx.attr("axis")):
        from reference_ops.elementwise_add_op import elementwise_add_kernel

        elementwise_add_kernel(ctx)   # numpy-style broadcasting: the xp-shared kernel
        return
    ctx.set_output("Out", kernels.elementwise_add(x, y, ctx.attr("axis")))


@_dedicated("softmax")
def softmax_gpu_kernel(ctx):
    x = ctx.input("X")
    if x.ndim == 0 or x.size == 0:
        from reference_ops.softmax_op import softmax_kernel

        softmax_kernel(ctx)           # 0-D (softmax is 1) and empty: the xp-shared kernel
        return
    axis = normalize_axis(ctx.attr("axis"), x.ndim)
    ctx.set_output("Out", kernels.softmax(x, axis))


@_dedicated("sum")
def sum_gpu_kernel(ctx):
    from opkit import SelectedRows
    from reference_ops.sum_op import sum_kernel

    if any(isinstance(ctx.scope.find_var(n).value(), SelectedRows)
           for n in ctx.input_names("X")):
        sum_kernel(ctx)  # sparse gradients: the xp-shared kernel handles SelectedRows
        return
    ctx.set_output("Out", kernels.sum_n(ctx.inputs("X")))


@_dedicated("concat")
def concat_gpu_kernel(ctx):
    from reference_ops.concat_op import concat_axis, concat_kernel

    xs = ctx.inputs("X")
    axis = concat_axis(ctx, xs[0].ndim)        # AxisTensor when given, else the attr
    if axis == 0 and any(t.lod for t in ctx.input_tensors("X")):
        concat_kernel(ctx)                     # the LoDs joined: the xp-shared kernel
        return
    ctx.set_output("Out", kernels.concat(xs, axis))


def _last_level(tensor, x):
    try:  # the LoD helper's check (names the op, says what is wrong)
        from reference_ops._sequence import last_level
    except ImportError:
        return tensor.lod[-1] if tensor.lod else [0, int(x.shape[0])]
    return last_level(tensor, "sequence_pool")


@_dedicated("sequence_pool")
def sequence_pool_gpu_kernel(ctx):
    """Same contract as the CPU kernel in sequence_pool_op.py: last LoD level, pad_value for
    empty sequences, MaxIndex (int32, -1 when empty) for MAX unless is_test."""
    tensor = ctx.input_tensor("X")
    x = ctx.input("X")
    offsets = [int(o) for o in _last_level(tensor, x)]
    enforce(offsets[-1] == x.shape[0], errors.InvalidArgument(
        "The last LoD offset of Input(X) of sequence_pool (%d) must equal its number of rows "
        "(%d)", offsets[-1], x.shape[0]))
    pooltype = ctx.attr("pooltype")
    want_index = pooltype == "MAX" and not ctx.attr("is_test") and ctx.has_output("MaxIndex")
    out, index = kernels.sequence_pool(x, offsets, pooltype, float(ctx.attr("pad_value")),
                                       with_index=want_index)
    out_lod = [list(level) for level in tensor.lod[:-1]]
    ctx.set_output("Out", out, lod=out_lod)
    if index is not None:
        ctx.set_output("MaxIndex", index, lod=out_lod)
