"""split: splits X into several outputs along one axis."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)

from reference_ops._common import normalize_axis
from reference_ops._tensor_attr import given, int_list_input, scalar_input
from opkit.framework import domains as D


class SplitOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) Input tensor of the split operator.")
        self.add_input("AxisTensor", "(Tensor<int>, optional) The axis, shape [1]; it takes "
                       "priority over attr axis.").as_dispensable()
        self.add_input("SectionsTensorList", "(vector<Tensor<int>>, optional) The sections, "
                       "one tensor of shape [1] each; they take priority over attr sections."
                       ).as_duplicable().as_dispensable()
        self.add_output("Out", "(vector<Tensor>) Output tensors of the split operator."
                        ).as_duplicable()
        self.add_attr("axis", "int", "(int, default 0) The axis along which to split; negative "
                      "counts from the end.").set_default(0)
        self.add_attr("num", "int", "(int, default 0) Number of equal-sized parts; used when "
                      "`sections` is empty.").set_default(0).greater_than(-1)
        self.add_attr("sections", "ints", "(list<int>, default []) The size of each part along "
                      "`axis`; one entry may be -1 (inferred).").set_default([])
        # declared domains (docs/domains.md)
        self.proto.attr("axis").set_domain(D.axis_of("X"))
        self.add_comment(r"""Split operator.

Splits X along `axis` into `num` equal parts or into parts of the sizes in
`sections`:
$$Out_i = X[\ldots, o_i : o_i + s_i, \ldots], \quad o_i = \sum_{j < i} s_j$$
""")


def _section_sizes(dim, num, sections, n_out, axis, x_dims):
    """Sizes of the parts along the axis (-1 where unknown at compile time)."""
    if sections:
        sections = [int(s) for s in sections]
        enforce(len(sections) == n_out, errors.InvalidArgument(
            "Attr(sections) of SplitOp has %d entries but Output(Out) holds %d variables.",
            len(sections), n_out))
        unknown = [i for i, s in enumerate(sections) if s == -1]
        enforce(len(unknown) <= 1, errors.InvalidArgument(
            "Attr(sections) of SplitOp may hold at most one -1, but received %s.", sections))
        enforce(all(s >= 0 or s == -1 for s in sections), errors.InvalidArgument(
            "Attr(sections) of SplitOp should hold non-negative sizes (or one -1), but "
            "received %s.", sections))
        known = sum(s for s in sections if s >= 0)
        if dim >= 0:
            if unknown:
                enforce(known <= dim, errors.InvalidArgument(
                    "Attr(sections) %s of SplitOp sums to more than dim %d (%d) of X "
                    "(shape %s).", sections, axis, dim, x_dims))
                sections[unknown[0]] = dim - known
            else:
                enforce(known == dim, errors.InvalidArgument(
                    "Attr(sections) %s of SplitOp should sum to dim %d (%d) of X (shape %s), "
                    "but sums to %d.", sections, axis, dim, x_dims, known))
        return sections
    num = int(num)
    enforce(num > 0, errors.InvalidArgument(
        "SplitOp needs Attr(num) > 0 or a non-empty Attr(sections), but num = %d and "
        "sections = %s.", num, list(sections)))
    enforce(num == n_out, errors.InvalidArgument(
        "Attr(num) = %d of SplitOp should equal the number of outputs (%d).", num, n_out))
    if dim < 0:
        return [-1] * num
    enforce(dim % num == 0, errors.InvalidArgument(
        "Dim %d (%d) of X (shape %s) is not divisible by Attr(num) = %d in SplitOp.",
        axis, dim, x_dims, num))
    return [dim // num] * num


class SplitOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SplitOp should not be null.")
        enforce(ctx.has_output("Out"), "Outputs(Out) of SplitOp should not be null.")
        x_dims = list(ctx.get_input_dim("X"))
        n_out = len(ctx.output_names("Out"))
        if given(ctx, "AxisTensor") or given(ctx, "SectionsTensorList"):
            # the axis or the sizes are known at run time only
            unknown_axis = given(ctx, "AxisTensor")
            axis = None if unknown_axis else normalize_axis(ctx.attr("axis"), len(x_dims))
            outs = []
            for _ in range(n_out):
                d = [-1] * len(x_dims) if unknown_axis else list(x_dims)
                if axis is not None:
                    d[axis] = -1
                outs.append(d)
            ctx.set_outputs_dim("Out", outs)
            return
        axis = normalize_axis(ctx.attr("axis"), len(x_dims))
        sizes = _section_sizes(x_dims[axis], ctx.attr("num"), ctx.attr("sections"), n_out,
                               axis, x_dims)
        outs = []
        for s in sizes:
            d = list(x_dims)
            d[axis] = s
            outs.append(d)
        ctx.set_outputs_dim("Out", outs)
        if axis != 0:
            for j in range(n_out):
                ctx.share_lod("X", "Out", 0, j)


class SplitGradMaker(GradOpMaker):
    """The gradient of split is the concatenation of the output gradients (split_grad)."""

    def apply(self):
        op = self.new_grad_op("split_grad")
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        if self.input("AxisTensor"):
            op.set_input("AxisTensor", self.input("AxisTensor"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class SplitGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Inputs(Out@GRAD) of SplitGradOp should not be null.")
        dims = [list(d) for d in ctx.get_inputs_dim(grad_var_name("Out"))]
        if given(ctx, "AxisTensor"):
            ctx.set_output_dim(grad_var_name("X"), [-1] * len(dims[0]))
            return
        axis = normalize_axis(ctx.attr("axis"), len(dims[0]))
        out = list(dims[0])
        out[axis] = -1 if any(d[axis] < 0 for d in dims) else sum(d[axis] for d in dims)
        ctx.set_output_dim(grad_var_name("X"), out)

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("split", SplitOp, SplitOpMaker, grad_maker=SplitGradMaker)
register_operator("split_grad", SplitGradOp)


@register_kernel("split", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def split_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    axis = normalize_axis(scalar_input(ctx, "AxisTensor", ctx.attr("axis")), x.ndim)
    n_out = len(ctx.output_names("Out"))
    sections = int_list_input(ctx, list_slot="SectionsTensorList", default=ctx.attr("sections"))
    sizes = _section_sizes(int(x.shape[axis]), ctx.attr("num"), sections, n_out,
                           axis, list(x.shape))
    bounds, pos = [], 0
    for s in sizes[:-1]:
        pos += s
        bounds.append(pos)
    ctx.set_outputs("Out", [xp.array(p, copy=True) for p in xp.split(x, bounds, axis=axis)])


@register_kernel("split_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def split_grad_kernel(ctx):
    xp = ctx.xp
    douts = ctx.inputs(grad_var_name("Out"))
    axis = normalize_axis(scalar_input(ctx, "AxisTensor", ctx.attr("axis")), douts[0].ndim)
    ctx.set_output(grad_var_name("X"), xp.concatenate(douts, axis=axis))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402


def _not_axis(of):
    """i is not the axis of attr axis, and no AxisTensor overrides it (its value is not
    known when the signature is chosen: then no split is declared)."""
    def fn(c, i):
        rank = c.ndim(of)
        return not c.has("AxisTensor") and i != int(c.attr("axis")) % rank
    return Where("i != attr(axis) and no AxisTensor", fn)


_B = {"AxisTensor": broadcast, "SectionsTensorList": broadcast}
register_sbp("split",
             Signature({"X": split("i"), **_B, "Out": split("i")}, each="X",
                       where=_not_axis("X")),
             Signature({"X": partial_sum, **_B, "Out": partial_sum}))
register_sbp("split_grad",
             Signature({G("Out"): split("i"), "AxisTensor": broadcast, G("X"): split("i")},
                       each=G("X"), where=_not_axis(G("X"))),
             Signature({G("Out"): partial_sum, "AxisTensor": broadcast, G("X"): partial_sum}))
