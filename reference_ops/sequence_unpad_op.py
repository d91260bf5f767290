"""sequence_unpad: the inverse of sequence_pad, a padded batch back to a LoDTensor."""
import numpy as np

from opkit import (GradOpMaker, OpKernelType, OpMaker, OperatorWithKernel, enforce, errors,
                   grad_var_name, register_kernel, register_operator)

from reference_ops.sequence_pad_op import pad_positions
from opkit.framework import domains as D


class SequenceUnpadOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) Shape [num_sequences, padded_length, ...].")
        self.add_input("Length", "(Tensor<int64>) Shape [num_sequences]: the real length of "
                       "every sequence.")
        self.add_output("Out", "(LoDTensor) The rows of X that are not padding, with LoD "
                        "[Length] (lod_level 1).")
        # declared domains (docs/domains.md)
        self.proto.input("Length").set_domain(D.integers(0, D.dim("X", 1) + 1))
        self.add_comment(r"""Sequence Unpad Operator.

With $L_i$ = Length[i] and $o_i = \sum_{k<i} L_k$:
$$Out[o_i + j] = X[i, j], \quad 0 \le j < L_i$$
Out's LoD is [[o_0, o_1, ..., o_n]]. e.g. X = [[a, b], [v, v], [c, v]] and Length
[2, 0, 1] give Out = [a, b, c] with LoD [[0, 2, 2, 3]].
""")


class SequenceUnpadOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SequenceUnpadOp should not be null.")
        enforce(ctx.has_input("Length"), "Input(Length) of SequenceUnpadOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SequenceUnpadOp should not be null.")
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) >= 2, errors.InvalidArgument(
            "Input(X) of sequence_unpad must have rank >= 2 ([num_sequences, padded_length, "
            "...]), but got shape %s", dims))
        len_dims = list(ctx.get_input_dim("Length"))
        enforce(len(len_dims) == 1 or (len(len_dims) == 2 and len_dims[1] == 1),
                errors.InvalidArgument("Input(Length) of sequence_unpad must have shape "
                                       "[num_sequences], but got %s", len_dims))
        if dims[0] >= 0 and len_dims[0] >= 0:
            enforce(dims[0] == len_dims[0], errors.InvalidArgument(
                "Input(X) of sequence_unpad holds %d sequences but Input(Length) holds %d",
                dims[0], len_dims[0]))
        # as Paddle: a 2-D X ([N, L]) gives Out of shape [sum(Length), 1]
        ctx.set_output_dim("Out", [-1] + (dims[2:] if len(dims) > 2 else [1]))
        ctx.set_lod_level("Out", 1)

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class SequenceUnpadGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("sequence_unpad_grad")
        op.set_input("X", self.input("X"))
        op.set_input("Length", self.input("Length"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class SequenceUnpadGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of SequenceUnpadGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("sequence_unpad", SequenceUnpadOp, SequenceUnpadOpMaker,
                  grad_maker=SequenceUnpadGradMaker)
register_operator("sequence_unpad_grad", SequenceUnpadGradOp, no_need_buffer=["X"])


def unpad_offsets(length, n: int, width: int, op: str) -> np.ndarray:
    lens = np.asarray(length, dtype=np.int64).reshape(-1)
    enforce(lens.size == n, errors.InvalidArgument(
        "Input(Length) of %s holds %d lengths but Input(X) holds %d sequences", op, lens.size,
        n))
    enforce(bool(np.all((lens >= 0) & (lens <= width))), errors.InvalidArgument(
        "every Length of %s must be in [0, %d] (X's padded length), but got %s", op, width,
        lens.tolist()))
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


@register_kernel("sequence_unpad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_unpad_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    from opkit.framework.device import to_host

    off = unpad_offsets(to_host(ctx.input("Length")), x.shape[0], x.shape[1], "sequence_unpad")
    ids, pos = pad_positions(off)
    if ids.size:
        out = x[xp.asarray(ids), xp.asarray(pos)]
    else:
        out = xp.zeros((0,) + tuple(x.shape[2:]), dtype=x.dtype)
    if x.ndim == 2:
        out = xp.reshape(out, (-1, 1))
    ctx.set_output("Out", xp.ascontiguousarray(out), lod=[off.tolist()])  # opkit: ignore[OPK004] fancy indexing copies


@register_kernel("sequence_unpad_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_unpad_grad_kernel(ctx):
    xp = ctx.xp
    x_tensor = ctx.input_tensor("X")
    shape = tuple(x_tensor.shape)
    dout = ctx.input(grad_var_name("Out"))
    from opkit.framework.device import to_host

    off = unpad_offsets(to_host(ctx.input("Length")), shape[0], shape[1], "sequence_unpad_grad")
    ids, pos = pad_positions(off)
    dx = xp.zeros(shape, dtype=dout.dtype)
    if ids.size:
        dx[xp.asarray(ids), xp.asarray(pos)] = xp.reshape(dout, (-1,) + shape[2:])
    ctx.set_output(grad_var_name("X"), dx)
