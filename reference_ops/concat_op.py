"""concat: joins the inputs along one axis."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from reference_ops._extra import add_extra_attrs
from reference_ops._common import normalize_axis


class ConcatOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(vector<Tensor>) The input tensors of concat operator."
                       ).as_duplicable()
        self.add_output("Out", "(Tensor) The output tensor of concat operator.")
        self.add_attr("axis", "int", "(int, default 0) The axis along which the inputs are "
                      "joined; negative counts from the end.").set_default(0)
        add_extra_attrs(self, "use_mkldnn", "use_quantizer")
        self.add_comment(r"""Concat Operator.

Concatenates the inputs along `axis`; all other dimensions must agree:
$$Out = [X_0, X_1, \ldots, X_{n-1}]_{axis}$$
e.g. X_0 = [[1, 2]], X_1 = [[3, 4]], axis = 0 gives Out = [[1, 2], [3, 4]].
""")


class ConcatOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Inputs(X) of ConcatOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of ConcatOp should not be null.")
        dims = [list(d) for d in ctx.get_inputs_dim("X")]
        enforce(len(dims) > 0, errors.InvalidArgument(
            "Inputs(X) of ConcatOp should hold at least one tensor, but received %d.", len(dims)))
        rank = len(dims[0])
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
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class ConcatGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of ConcatGradOp should not be null.")
        # one shape per X; X@GRAD's "@EMPTY@" placeholders (no gradient wanted) are skipped
        ctx.set_outputs_dim(grad_var_name("X"), ctx.get_inputs_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("concat", ConcatOp, ConcatOpMaker, grad_maker=ConcatGradMaker)
register_operator("concat_grad", ConcatGradOp, no_need_buffer=["X"])


# the GPU kernel of concat is a dedicated cupy kernel: reference_ops/gpu/
@register_kernel("concat", place="CPU", dtypes=("float32", "float64"))
def concat_kernel(ctx):
    xp = ctx.xp
    xs = ctx.inputs("X")
    axis = normalize_axis(ctx.attr("axis"), xs[0].ndim)
    ctx.set_output("Out", xp.concatenate(xs, axis=axis))


@register_kernel("concat_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def concat_grad_kernel(ctx):
    xp = ctx.xp
    dout = ctx.input(grad_var_name("Out"))
    shapes = [t.shape for t in ctx.input_tensors("X")]
    axis = normalize_axis(ctx.attr("axis"), dout.ndim)
    bounds, pos = [], 0
    for s in shapes[:-1]:
        pos += int(s[axis])
        bounds.append(pos)
    pieces = [xp.array(p, copy=True) for p in xp.split(dout, bounds, axis=axis)]
    ctx.set_outputs(grad_var_name("X"), pieces)
