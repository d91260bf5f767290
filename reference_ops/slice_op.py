"""slice: takes a sub-tensor of Input along some axes."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from reference_ops._tensor_attr import given, int_list_input
from opkit.framework import domains as D

_TENSOR_SLOTS = ("StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList")


class SliceOpMaker(OpMaker):
    def make(self):
        self.add_input("Input", "(Tensor) Tensor of data to extract slices from.")
        self.add_input("StartsTensor", "(Tensor<int>, optional) The starts, 1-D; it takes "
                       "priority over Input(StartsTensorList) and attr starts."
                       ).as_dispensable()
        self.add_input("EndsTensor", "(Tensor<int>, optional) The ends, 1-D; it takes "
                       "priority over Input(EndsTensorList) and attr ends.").as_dispensable()
        self.add_input("StartsTensorList", "(vector<Tensor<int>>, optional) The starts, one "
                       "tensor of shape [1] each; it takes priority over attr starts."
                       ).as_duplicable().as_dispensable()
        self.add_input("EndsTensorList", "(vector<Tensor<int>>, optional) The ends, one "
                       "tensor of shape [1] each; it takes priority over attr ends."
                       ).as_duplicable().as_dispensable()
        self.add_output("Out", "(Tensor) Sliced data tensor.")
        self.add_attr("axes", "ints", "(list<int>) Axes that `starts` and `ends` apply to.")
        self.add_attr("starts", "ints", "(list<int>, default []) Starting indices of "
                      "corresponding axis in `axes`; negative counts from the end (may be left "
                      "out when the starts come as tensors).", default=[])
        self.add_attr("ends", "ints", "(list<int>, default []) Ending indices (exclusive) of "
                      "corresponding axis in `axes`; negative counts from the end, clamped to "
                      "the dim (may be left out when the ends come as tensors).", default=[])
        self.add_attr("infer_flags", "ints", "(list<int>, default []) Per axis: -1 when its "
                      "start or end is given as a tensor (its size is unknown at compile "
                      "time), else 1.", default=[])
        self.add_attr("decrease_axis", "ints", "(list<int>, default []) Axes (of size 1 after "
                      "slicing) removed from Out; removing every axis leaves shape [1].",
                      default=[])
        # declared domains (docs/domains.md)
        self.proto.attr("axes").set_domain(D.axes_of("Input"))
        self.add_comment(r"""Slice Operator.

For each axis in `axes` takes the range [start, end) (negative values count
from the end, both are clamped to [0, dim]):
$$Out = Input[\ldots, starts_i : ends_i, \ldots]$$
e.g. Input = [[1, 2, 3, 4], [5, 6, 7, 8]], axes = [0, 1], starts = [1, 0],
ends = [2, 3] gives Out = [[5, 6, 7]].
""")


def decrease_dims(dims, decrease_axis):
    """Out's dims without the decreased axes (each must be 1); [1] when none is left."""
    decrease = sorted({int(a) for a in decrease_axis})
    for a in decrease:
        enforce(0 <= a < len(dims), errors.InvalidArgument(
            "Attr(decrease_axis) %s of SliceOp holds axis %d, out of range for rank %d.",
            list(decrease_axis), a, len(dims)))
        enforce(dims[a] in (1, -1), errors.InvalidArgument(
            "Attr(decrease_axis) %s of SliceOp removes axis %d, but its size after slicing is "
            "%d (it must be 1).", list(decrease_axis), a, dims[a]))
    out = [d for i, d in enumerate(dims) if i not in decrease]
    return out or [1]


def runtime_bounds(ctx):
    """(starts, ends): Input(StartsTensor), else Input(StartsTensorList), else the attr."""
    starts = int_list_input(ctx, "StartsTensor", "StartsTensorList", ctx.attr("starts"))
    ends = int_list_input(ctx, "EndsTensor", "EndsTensorList", ctx.attr("ends"))
    return starts, ends


def _check_attrs(axes, starts, ends, rank, in_dims):
    axes, starts, ends = [int(a) for a in axes], [int(s) for s in starts], [int(e) for e in ends]
    enforce(len(starts) == len(axes) and len(ends) == len(axes), errors.InvalidArgument(
        "The sizes of Attr(axes) (%d), Attr(starts) (%d) and Attr(ends) (%d) of SliceOp should "
        "be equal.", len(axes), len(starts), len(ends)))
    for a in axes:
        enforce(0 <= a < rank, errors.InvalidArgument(
            "Attr(axes) %s of SliceOp holds axis %d, out of range for Input of rank %d "
            "(shape %s).", axes, a, rank, list(in_dims)))
    enforce(len(set(axes)) == len(axes), errors.InvalidArgument(
        "Attr(axes) %s of SliceOp should not repeat an axis.", axes))
    return axes, starts, ends


def _clamp(start, end, dim):
    """Paddle's rule: negative -> + dim, then clamp to [0, dim]; empty if end <= start."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    start = min(max(start, 0), dim)
    end = min(max(end, 0), dim)
    return start, max(end, start)


def slice_bounds(shape, axes, starts, ends):
    """Python slices for every dimension of `shape`."""
    index = [slice(None)] * len(shape)
    for a, s, e in zip(axes, starts, ends):
        s, e = _clamp(s, e, int(shape[a]))
        index[a] = slice(s, e)
    return tuple(index)


class SliceOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("Input"), "Input(Input) of SliceOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SliceOp should not be null.")
        in_dims = list(ctx.get_input_dim("Input"))
        axes = [int(a) for a in ctx.attr("axes")]
        if any(given(ctx, slot) for slot in _TENSOR_SLOTS):
            # starts/ends known at run time only: the sliced sizes are unknown here
            out = list(in_dims)
            for a in axes:
                enforce(0 <= a < len(in_dims), errors.InvalidArgument(
                    "Attr(axes) %s of SliceOp holds axis %d, out of range for Input of rank "
                    "%d (shape %s).", axes, a, len(in_dims), in_dims))
                out[a] = -1
        else:
            axes, starts, ends = _check_attrs(axes, ctx.attr("starts"), ctx.attr("ends"),
                                              len(in_dims), in_dims)
            out = list(in_dims)
            flags = [int(f) for f in ctx.attr("infer_flags")]
            for i, (a, s, e) in enumerate(zip(axes, starts, ends)):
                if in_dims[a] < 0 or (i < len(flags) and flags[i] == -1):
                    out[a] = -1
                else:
                    s, e = _clamp(s, e, in_dims[a])
                    out[a] = e - s
        if ctx.attr("decrease_axis"):
            out = decrease_dims(out, ctx.attr("decrease_axis"))
        ctx.set_output_dim("Out", out)
        if 0 not in axes:
            ctx.share_lod("Input", "Out")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "Input"), ctx.place)


class SliceGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("slice_grad")
        op.set_input("Input", self.input("Input"))
        for slot in _TENSOR_SLOTS:
            if self.input(slot):
                op.set_input(slot, self.input(slot))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("Input"), self.input_grad("Input"))
        return [op]


class SliceGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("Input"), "Input(Input) of SliceGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of SliceGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("Input"), ctx.get_input_dim("Input"))
        ctx.share_lod("Input", grad_var_name("Input"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("slice", SliceOp, SliceOpMaker, grad_maker=SliceGradMaker)
register_operator("slice_grad", SliceGradOp, no_need_buffer=["Input"])


@register_kernel("slice", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def slice_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("Input")
    starts, ends = runtime_bounds(ctx)
    axes, starts, ends = _check_attrs(ctx.attr("axes"), starts, ends, x.ndim, x.shape)
    out = x[slice_bounds(x.shape, axes, starts, ends)]
    if ctx.attr("decrease_axis"):
        out = xp.reshape(out, tuple(decrease_dims(list(out.shape), ctx.attr("decrease_axis"))))
    ctx.set_output("Out", xp.array(out, copy=True))


@register_kernel("slice_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def slice_grad_kernel(ctx):
    xp = ctx.xp
    shape = tuple(int(d) for d in ctx.input_tensor("Input").shape)  # shape only: no_need_buffer
    dout = ctx.input(grad_var_name("Out"))
    starts, ends = runtime_bounds(ctx)
    axes, starts, ends = _check_attrs(ctx.attr("axes"), starts, ends, len(shape), shape)
    dx = xp.zeros(shape, dtype=dout.dtype)
    index = slice_bounds(shape, axes, starts, ends)
    dx[index] = xp.reshape(dout, dx[index].shape)   # undoes decrease_axis
    ctx.set_output(grad_var_name("Input"), dx)


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Axis, Signature, broadcast, not_attr_axes, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402


def _after_decrease(c, i):
    """Input's axis i in Out: i less the dropped (decrease_axis) axes before it."""
    rank = c.ndim("Input")
    dropped = {int(d) % rank for d in c.attr("decrease_axis")}
    return i - sum(1 for d in dropped if d < i)


_KEPT = not_attr_axes("axes", of="Input")
_T = {s: broadcast for s in ("StartsTensor", "EndsTensor", "StartsTensorList",
                              "EndsTensorList")}
_OUT = Axis("axis_after_decrease(i)", _after_decrease)
# any axis that is not sliced (the slice bounds are logical indices); slicing is linear
register_sbp("slice",
             Signature({"Input": split("i"), **_T, "Out": split(_OUT)}, each="Input",
                       where=_KEPT),
             Signature({"Input": partial_sum, **_T, "Out": partial_sum}))
register_sbp("slice_grad",
             Signature({"Input": split("i"), **_T, G("Out"): split(_OUT),
                        G("Input"): split("i")}, each="Input", where=_KEPT),
             Signature({"Input": broadcast, **_T, G("Out"): partial_sum,
                        G("Input"): partial_sum}))
