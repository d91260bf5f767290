"""reshape2: reshape with an XShape output (X's shape, for the grad op) and the shape also
given as tensors (Paddle's reshape2: what fluid.layers.reshape builds)."""
from opkit import (GradOpMaker, OperatorWithKernel, OpKernelType, OpMaker, enforce,
                   grad_var_name, register_kernel, register_operator)
from reference_ops._extra import add_extra_attrs
from reference_ops._tensor_attr import given, int_list_input
from reference_ops.reshape_op import infer_reshape_dims


class Reshape2OpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input tensor of reshape operator.")
        self.add_input("Shape", "(Tensor<int32>, optional) The new shape, 1-D; it takes "
                       "priority over attr shape.").as_dispensable()
        self.add_input("ShapeTensor", "(vector<Tensor<int32>>, optional) The new shape, one "
                       "tensor of shape [1] per dimension; it takes priority over Input(Shape) "
                       "and attr shape.").as_duplicable().as_dispensable()
        self.add_output("Out", "(Tensor) The output tensor of reshape operator.")
        self.add_output("XShape", "(Tensor) Holds no data: its shape is [0] + shape(X), for "
                        "the grad op.").as_intermediate()
        self.add_attr("shape", "ints", "(list<int>, default []) The new shape. A 0 copies the "
                      "dimension of X at the same index; at most one -1 is inferred from the "
                      "number of elements.", default=[])
        add_extra_attrs(self, "use_mkldnn", "use_quantizer", "mkldnn_data_type")
        self.add_comment(r"""Reshape2 Operator.

Out holds the elements of X in the same (row-major) order with the new shape,
taken from Input(ShapeTensor), else Input(Shape), else attr `shape`; a 0 copies
the dimension of X, one -1 is inferred:
$$Out = reshape(X, shape), \quad numel(Out) = numel(X)$$
XShape has shape [0] + shape(X) and no data.
""")


def _tensor_shape_rank(ctx):
    if given(ctx, "ShapeTensor"):
        return len(ctx.input_names("ShapeTensor"))
    dims = list(ctx.get_input_dim("Shape"))
    return int(dims[0]) if dims and int(dims[0]) >= 0 else None


class Reshape2Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of Reshape2Op should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of Reshape2Op should not be null.")
        x_dims = list(ctx.get_input_dim("X"))
        if ctx.has_output("XShape"):
            ctx.set_output_dim("XShape", [0] + x_dims)
            ctx.share_lod("X", "XShape")
        if given(ctx, "ShapeTensor") or given(ctx, "Shape"):
            rank = _tensor_shape_rank(ctx)   # the sizes are known at run time only
            if rank is not None:
                ctx.set_output_dim("Out", [-1] * rank)
            ctx.share_lod("X", "Out")
            return
        out = infer_reshape_dims(x_dims, ctx.attr("shape"))
        ctx.set_output_dim("Out", out)
        if x_dims and out and x_dims[0] == out[0]:
            ctx.share_lod("X", "Out")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class Reshape2GradMaker(GradOpMaker):
    """reshape2_grad reads XShape (only its shape) and Out@GRAD, as in Paddle; X when the
    forward op has no XShape."""

    def apply(self):
        op = self.new_grad_op("reshape2_grad")
        if self.output("XShape"):
            op.set_input("XShape", self.output("XShape"))
        else:
            op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


def x_dims_of_grad(ctx):
    """X's dims in a reshape2/transpose2 grad op: XShape's dims without the leading 0."""
    if ctx.has_input("XShape"):
        return list(ctx.get_input_dim("XShape"))[1:]
    return list(ctx.get_input_dim("X"))


class Reshape2GradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of Reshape2GradOp should not be null.")
        enforce(ctx.has_input("XShape") or ctx.has_input("X"),
                "Input(XShape) of Reshape2GradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), x_dims_of_grad(ctx))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("reshape2", Reshape2Op, Reshape2OpMaker, grad_maker=Reshape2GradMaker,
                  inplace={"X": "Out"})
register_operator("reshape2_grad", Reshape2GradOp, no_need_buffer=["XShape", "X"],
                  inplace={grad_var_name("Out"): grad_var_name("X")})


def grad_x_shape(ctx):
    if ctx.has_input("XShape"):
        return tuple(int(d) for d in ctx.input_tensor("XShape").shape[1:])
    return tuple(int(d) for d in ctx.input_tensor("X").shape)


@register_kernel("reshape2", place=("CPU", "GPU"),     # bool, ints: Paddle 2.x
                 dtypes=("float32", "float64", "bool", "int8", "uint8", "int16", "int32",
                         "int64"))
def reshape2_kernel(ctx):
    # X -> Out is declared inplace: Out may be a view of X's buffer.
    xp = ctx.xp
    x = ctx.input("X")
    shape = int_list_input(ctx, "Shape", None, ctx.attr("shape"))
    shape = int_list_input(ctx, None, "ShapeTensor", shape)
    ctx.set_output("Out", xp.reshape(x, tuple(infer_reshape_dims(x.shape, shape))))
    if ctx.has_output("XShape"):
        ctx.set_output("XShape", xp.empty((0,) + tuple(x.shape), dtype=x.dtype))


@register_kernel("reshape2_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def reshape2_grad_kernel(ctx):
    # Out@GRAD -> X@GRAD is declared inplace: X@GRAD may be a view of Out@GRAD.
    dout = ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), ctx.xp.reshape(dout, grad_x_shape(ctx)))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Axis, Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G, reshaped_axis, shifted  # noqa: E402


_FWD = reshaped_axis("X", "Out")
_BWD = reshaped_axis(G("X"), G("Out"))
register_sbp("reshape2",
             Signature({"X": split("i"), "Out": split(Axis("reshaped_axis(i)", _FWD)),
                        "XShape": split(shifted())}, each="X",
                       where=Where("reshaped_axis(i) exists", lambda c, i: _FWD(c, i) is not None)),
             Signature({"X": partial_sum, "Shape": broadcast, "ShapeTensor": broadcast,
                        "Out": partial_sum, "XShape": broadcast}))
register_sbp("reshape2_grad",
             Signature({"XShape": split(shifted()), "X": split("i"),
                        G("Out"): split(Axis("reshaped_axis(i)", _BWD)), G("X"): split("i")},
                       each=G("X"),
                       where=Where("reshaped_axis(i) exists", lambda c, i: _BWD(c, i) is not None)),
             Signature({"XShape": broadcast, "X": broadcast, G("Out"): partial_sum,
                        G("X"): partial_sum}))
