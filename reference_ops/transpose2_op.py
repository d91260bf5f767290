"""transpose2: transpose with an XShape output (X's shape, for the grad op), as Paddle's
transpose2 (what fluid.layers.transpose builds)."""
from opkit import (GradOpMaker, OperatorWithKernel, OpKernelType, OpMaker, enforce,
                   grad_var_name, register_kernel, register_operator)
from reference_ops._extra import add_extra_attrs
from reference_ops.reshape2_op import grad_x_shape, x_dims_of_grad
from reference_ops.transpose_op import _check_perm
from opkit.framework import domains as D


class Transpose2OpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input tensor, tensors with rank up to 6 are "
                       "supported.")
        self.add_output("Out", "(Tensor) The output tensor.")
        self.add_output("XShape", "(Tensor) Holds no data: its shape is [0] + shape(X), for "
                        "the grad op.").as_intermediate()
        self.add_attr("axis", "ints", "(list<int>) A permutation of [0, rank(X)): dimension i "
                      "of Out is dimension axis[i] of X.")
        add_extra_attrs(self, "use_mkldnn", "data_format", "use_quantizer", "mkldnn_data_type")
        # declared domains (docs/domains.md)
        self.proto.attr("axis").set_domain(D.perm_of("X"))
        self.add_comment(r"""Transpose2 Operator.

Permutes the dimensions of X according to `axis` (as transpose):
$$shape(Out)_k = shape(X)_{axis[k]}$$
XShape has shape [0] + shape(X) and no data.
""")


class Transpose2Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of Transpose2Op should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of Transpose2Op should not be null.")
        x_dims = list(ctx.get_input_dim("X"))
        axis = _check_perm(ctx.attr("axis"), x_dims)
        ctx.set_output_dim("Out", [x_dims[a] for a in axis])
        if ctx.has_output("XShape"):
            ctx.set_output_dim("XShape", [0] + x_dims)
            ctx.share_lod("X", "XShape")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class Transpose2GradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("transpose2_grad")
        if self.output("XShape"):
            op.set_input("XShape", self.output("XShape"))
        else:
            op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class Transpose2GradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of Transpose2GradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), x_dims_of_grad(ctx))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("transpose2", Transpose2Op, Transpose2OpMaker, grad_maker=Transpose2GradMaker)
register_operator("transpose2_grad", Transpose2GradOp, no_need_buffer=["XShape", "X"])


@register_kernel("transpose2", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def transpose2_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    axis = _check_perm(ctx.attr("axis"), x.shape)
    ctx.set_output("Out", xp.array(xp.transpose(x, axis), copy=True))
    if ctx.has_output("XShape"):
        ctx.set_output("XShape", xp.empty((0,) + tuple(x.shape), dtype=x.dtype))


@register_kernel("transpose2_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def transpose2_grad_kernel(ctx):
    xp = ctx.xp
    dout = ctx.input(grad_var_name("Out"))
    axis = _check_perm(ctx.attr("axis"), grad_x_shape(ctx))
    inverse = [0] * len(axis)
    for i, a in enumerate(axis):
        inverse[a] = i
    ctx.set_output(grad_var_name("X"), xp.array(xp.transpose(dout, inverse), copy=True))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G, perm_position, shifted  # noqa: E402

# X's axis i is Out's axis perm.index(i); XShape is [0] + shape(X)
register_sbp("transpose2",
             Signature({"X": split("i"), "Out": split(perm_position()), "XShape": split(shifted())},
                       each="X"),
             Signature({"X": partial_sum, "Out": partial_sum, "XShape": broadcast}))
register_sbp("transpose2_grad",
             Signature({"XShape": split(shifted()), "X": split("i"),
                        G("Out"): split(perm_position()), G("X"): split("i")}, each=G("X")),
             Signature({"XShape": broadcast, "X": broadcast, G("Out"): partial_sum,
                        G("X"): partial_sum}))
