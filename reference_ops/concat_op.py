"""concat: joins the inputs along one axis."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from reference_ops._extra import add_extra_attrs
from reference_ops._common import normalize_axis
from reference_ops._tensor_attr import given, scalar_input
from opkit.framework import domains as D


class ConcatOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(vector<Tensor>) The input tensors of concat operator."
                       ).as_duplicable()
        self.add_input("AxisTensor", "(Tensor<int>, optional) The axis, shape [1]; it takes "
                       "priority over attr axis.").as_dispensable()
        self.add_output("Out", "(Tensor) The output tensor of concat operator.")
        self.add_attr("axis", "int", "(int, default 0) The axis along which the inputs are "
                      "joined; negative counts from the end.").set_default(0)
        add_extra_attrs(self, "use_mkldnn", "use_quantizer")
        # declared domains (docs/domains.md)
        self.proto.attr("axis").set_domain(D.axis_of("X"))
        self.add_comment(r"""Concat Operator.

Concatenates the inputs along `axis`; all other dimensions must agree:
$$Out = [X_0, X_1, \ldots, X_{n-1}]_{axis}$$
e.g. X_0 = [[1, 2]], X_1 = [[3, 4]], axis = 0 gives Out = [[1, 2], [3, 4]].
On axis 0, when every input has a LoD (of the same number of levels), Out's LoD
is their concatenation; otherwise Out keeps X_0's LoD.
""")


class ConcatOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Inputs(X) of ConcatOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of ConcatOp should not be null.")
        dims = [list(d) for d in ctx.get_inputs_dim("X")]
        enforce(len(dims) > 0, errors.InvalidArgument(
            "Inputs(X) of ConcatOp should hold at least one tensor, but received %d.", len(dims)))
        rank = len(dims[0])
        if given(ctx, "AxisTensor"):     # the axis is known at run time only
            ctx.set_output_dim("Out", [-1] * rank)
            ctx.share_lod("X", "Out")
            return
        axis = normalize_axis(ctx.attr("axis"), rank)
        out = list(dims[0])
        for i, d in enumerate(dims[1:], start=1):
            enforce(len(d) == rank, errors.InvalidArgument(
                "Inputs(X) of ConcatOp should all have the same rank, but X[0] has shape %s and "
                "X[%d] has shape %s.", dims[0], i, d))
            for k in range(rank):
                if k == axis:
                    out[k] = -1 if (out[k] < 0 or d[k] < 0) else out[k] + d[k]
                elif out[k] < 0:
                    out[k] = d[k]
                elif d[k] >= 0:
                    enforce(out[k] == d[k], errors.InvalidArgument(
                        "Inputs(X) of ConcatOp should agree on every dimension except axis %d, "
                        "but X[0] has shape %s and X[%d] has shape %s (dim %d).",
                        axis, dims[0], i, d, k))
        ctx.set_output_dim("Out", out)
        ctx.share_lod("X", "Out")


class ConcatGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("concat_grad")
        op.set_input("X", self.input("X"))
        if self.input("AxisTensor"):
            op.set_input("AxisTensor", self.input("AxisTensor"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class ConcatGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of ConcatGradOp should not be null.")
        # one shape per X; X@GRAD's "@EMPTY@" placeholders (no gradient wanted) are skipped
        ctx.set_outputs_dim(grad_var_name("X"), ctx.get_inputs_dim("X"))
        # each X@GRAD[i] gets X[i]'s LoD
        raw = ctx.op.outputs.get(grad_var_name("X")) or []
        present = ctx.output_names(grad_var_name("X"))
        if len(raw) == len(ctx.input_names("X")):
            for i, name in enumerate(raw):
                if name in present:
                    ctx.share_lod("X", grad_var_name("X"), i, present.index(name))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("concat", ConcatOp, ConcatOpMaker, grad_maker=ConcatGradMaker)
register_operator("concat_grad", ConcatGradOp, no_need_buffer=["X"])


def concat_axis(ctx, rank):
    return normalize_axis(scalar_input(ctx, "AxisTensor", ctx.attr("axis")), rank)


def concat_lod(lods):
    """The LoD of inputs joined on axis 0: each level's offsets appended, shifted by the
    offsets so far; None when some input has no LoD (Out then keeps X_0's, as in Paddle)."""
    if not lods or any(not lod for lod in lods):
        return None
    levels = len(lods[0])
    for i, lod in enumerate(lods):
        enforce(len(lod) == levels, errors.InvalidArgument(
            "concat on axis 0: Input X[%d] has a LoD of %d levels but X[0] has %d; the LoDs "
            "cannot be joined", i, len(lod), levels))
    out = [list(map(int, level)) for level in lods[0]]
    for lod in lods[1:]:
        for k, level in enumerate(lod):
            base = out[k][-1]
            out[k].extend(base + int(v) - int(level[0]) for v in level[1:])
    return out


# the GPU kernel of concat is a dedicated cupy kernel: reference_ops/gpu/
@register_kernel("concat", place="CPU", dtypes=("float32", "float64"))
def concat_kernel(ctx):
    xp = ctx.xp
    xs = ctx.inputs("X")
    axis = concat_axis(ctx, xs[0].ndim)
    lod = concat_lod([t.lod for t in ctx.input_tensors("X")]) if axis == 0 else None
    if lod is None:
        ctx.set_output("Out", xp.concatenate(xs, axis=axis))
    else:
        ctx.set_output("Out", xp.concatenate(xs, axis=axis), lod=lod)


@register_kernel("concat_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def concat_grad_kernel(ctx):
    xp = ctx.xp
    dout = ctx.input(grad_var_name("Out"))
    shapes = [t.shape for t in ctx.input_tensors("X")]
    axis = concat_axis(ctx, dout.ndim)
    bounds, pos = [], 0
    for s in shapes[:-1]:
        pos += int(s[axis])
        bounds.append(pos)
    pieces = [xp.array(p, copy=True) for p in xp.split(dout, bounds, axis=axis)]
    ctx.set_outputs(grad_var_name("X"), pieces)


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


# any axis but the one joined along (each device would join its own slices there)
register_sbp("concat",
             Signature({"X": split("i"), "AxisTensor": broadcast, "Out": split("i")},
                       each="X", where=_not_axis("X")),
             Signature({"X": partial_sum, "AxisTensor": broadcast, "Out": partial_sum}))
register_sbp("concat_grad",
             Signature({"X": split("i"), "AxisTensor": broadcast, G("Out"): split("i"),
                        G("X"): split("i")}, each=G("Out"),
                       where=_not_axis(G("Out"))),
             Signature({"X": broadcast, "AxisTensor": broadcast, G("Out"): partial_sum,
                        G("X"): partial_sum}))
