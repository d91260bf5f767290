"""sequence_softmax: a softmax over the rows of every sequence (last LoD level)."""
import numpy as np

from opkit import (GradOpMaker, OpKernelType, OpMaker, OperatorWithKernel, enforce, errors,
                   grad_var_name, register_kernel, register_operator)
from reference_ops._extra import add_extra_attrs
from reference_ops._sequence import check_lod_level, last_level, segment_ids, segment_max, \
    segment_sum


class SequenceSoftmaxOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(LoDTensor) Shape [N, 1] or [N]; its last LoD level delimits "
                       "the sequences.")
        self.add_output("Out", "(LoDTensor) Same shape and LoD as X.")
        add_extra_attrs(self, "use_cudnn", "data_format")
        self.add_comment(r"""Sequence Softmax Operator.

For every sequence $s = X[o_i : o_{i+1}]$ of the last LoD level:
$$Out[o_i + j] = \frac{\exp(s_j - \max_k s_k)}{\sum_k \exp(s_k - \max_k s_k)}$$
An empty sequence has no rows, so nothing to normalize. Out shares X's LoD.
""")


def _check_dims(ctx, dims, op):
    enforce(len(dims) == 1 or (len(dims) == 2 and dims[1] in (1, -1)), errors.InvalidArgument(
        "Input(X) of %s must have shape [N, 1] or [N], but got %s", op, list(dims)))


class SequenceSoftmaxOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SequenceSoftmaxOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SequenceSoftmaxOp should not be null.")
        check_lod_level(ctx, "X", 1, "sequence_softmax")
        dims = ctx.get_input_dim("X")
        _check_dims(ctx, dims, "sequence_softmax")
        ctx.set_output_dim("Out", dims)
        ctx.share_lod("X", "Out")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class SequenceSoftmaxGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("sequence_softmax_grad")
        op.set_input("X", self.input("X"))
        op.set_input("Out", self.output("Out"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class SequenceSoftmaxGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("Out"), "Input(Out) of SequenceSoftmaxGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of SequenceSoftmaxGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "Out"), ctx.place)


register_operator("sequence_softmax", SequenceSoftmaxOp, SequenceSoftmaxOpMaker,
                  grad_maker=SequenceSoftmaxGradMaker)
register_operator("sequence_softmax_grad", SequenceSoftmaxGradOp, no_need_buffer=["X"])


@register_kernel("sequence_softmax", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_softmax_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    off = np.asarray(last_level(ctx.input_tensor("X"), "sequence_softmax"), dtype=np.int64)
    flat = x.reshape(-1)
    enforce(int(off[-1]) == flat.shape[0], errors.InvalidArgument(
        "The last LoD offset of Input(X) of sequence_softmax (%d) must equal its number of "
        "rows (%d)", int(off[-1]), flat.shape[0]))
    ids = segment_ids(xp, off)
    top = segment_max(xp, flat, off)
    e = xp.exp(flat - top[ids]) if flat.size else flat.copy()
    total = segment_sum(xp, e, off, empty_value=1.0)
    out = e / total[ids] if flat.size else e
    ctx.set_output("Out", out.reshape(x.shape).astype(x.dtype, copy=False))


@register_kernel("sequence_softmax_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_softmax_grad_kernel(ctx):
    xp = ctx.xp
    out = ctx.input("Out").reshape(-1)
    dout = ctx.input(grad_var_name("Out")).reshape(-1)
    x_tensor = ctx.input_tensor("X")
    off = np.asarray(last_level(x_tensor, "sequence_softmax_grad"), dtype=np.int64)
    ids = segment_ids(xp, off)
    dot = segment_sum(xp, out * dout, off)
    dx = out * (dout - dot[ids]) if out.size else out.copy()
    ctx.set_output(grad_var_name("X"), dx.reshape(tuple(x_tensor.shape)))
