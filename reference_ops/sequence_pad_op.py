"""sequence_pad: pads every sequence (last LoD level) to the same length."""
import numpy as np

from opkit import (GradOpMaker, OpKernelType, OpMaker, OperatorWithKernel, enforce, errors,
                   grad_var_name, register_kernel, register_operator)

from reference_ops._sequence import check_lod_level, last_level


class SequencePadOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(LoDTensor) Shape [N, ...]; its last LoD level delimits the "
                       "sequences.")
        self.add_input("PadValue", "(Tensor) The padding value: shape [1] or X's shape "
                       "without the first dimension.").no_gradient(
            "the padding constant: Paddle's sequence_pad gives it no gradient")
        self.add_output("Out", "(LoDTensor) Shape [num_sequences, padded_length, ...]; its LoD "
                        "is X's without the last level.")
        self.add_output("Length", "(Tensor<int64>) Shape [num_sequences]: the length of every "
                        "sequence before padding.")
        self.add_attr("padded_length", "int", "(int, default -1) The length to pad to; -1 "
                      "means the longest sequence's length.").set_default(-1)
        self.add_comment(r"""Sequence Pad Operator.

With $s_i = X[o_i : o_{i+1}]$ of length $L_i$ and $P$ = padded_length (or $\max_i L_i$):
$$Out[i, j] = s_{ij} \ (j < L_i), \qquad Out[i, j] = PadValue \ (L_i \le j < P),
\qquad Length[i] = L_i$$
P must be at least every $L_i$. e.g. X = [a, b, c] with LoD [[0, 2, 2, 3]] and P = 2 gives
[[a, b], [v, v], [c, v]] and Length [2, 0, 1].
""")


class SequencePadOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SequencePadOp should not be null.")
        enforce(ctx.has_input("PadValue"), "Input(PadValue) of SequencePadOp should not be "
                                           "null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SequencePadOp should not be null.")
        enforce(ctx.has_output("Length"), "Output(Length) of SequencePadOp should not be null.")
        level = check_lod_level(ctx, "X", 1, "sequence_pad")
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) >= 2, errors.InvalidArgument(
            "Input(X) of sequence_pad must have rank >= 2 ([N, features...]), but got shape "
            "%s", dims))
        pad_dims = list(ctx.get_input_dim("PadValue"))
        feature = dims[1:]
        enforce(pad_dims in ([1], feature) or any(d < 0 for d in pad_dims + feature),
                errors.InvalidArgument(
                    "Input(PadValue) of sequence_pad must have shape [1] or %s (X's shape "
                    "without the first dimension), but got %s", feature, pad_dims))
        padded = ctx.attr("padded_length")
        enforce(padded == -1 or padded > 0, errors.InvalidArgument(
            "Attr(padded_length) of sequence_pad must be -1 or positive, but got %d", padded))
        ctx.set_output_dim("Out", [-1, padded] + feature)
        ctx.set_output_dim("Length", [-1])
        ctx.set_output_dtype("Length", "int64")
        ctx.set_lod_level("Out", level - 1)

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class SequencePadGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("sequence_pad_grad")
        op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]   # PadValue is a constant: no gradient, as in Paddle


class SequencePadGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of SequencePadGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("sequence_pad", SequencePadOp, SequencePadOpMaker,
                  grad_maker=SequencePadGradMaker)
register_operator("sequence_pad_grad", SequencePadGradOp, no_need_buffer=["X"])


def pad_positions(off: np.ndarray):
    """(sequence index, position inside it) of every row."""
    lens = np.diff(off)
    ids = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
    pos = np.arange(int(off[-1]), dtype=np.int64) - off[:-1][ids]
    return ids, pos


def _padded_length(ctx, lens, op):
    longest = int(lens.max()) if lens.size else 0
    padded = ctx.attr("padded_length")
    if padded == -1:
        return longest
    enforce(padded >= longest, errors.InvalidArgument(
        "Attr(padded_length) of %s (%d) must be at least the longest sequence's length (%d)",
        op, padded, longest))
    return padded


@register_kernel("sequence_pad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_pad_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    tensor = ctx.input_tensor("X")
    off = np.asarray(last_level(tensor, "sequence_pad"), dtype=np.int64)
    enforce(int(off[-1]) == x.shape[0], errors.InvalidArgument(
        "The last LoD offset of Input(X) of sequence_pad (%d) must equal its number of rows "
        "(%d)", int(off[-1]), x.shape[0]))
    lens = np.diff(off)
    padded = _padded_length(ctx, lens, "sequence_pad")
    feature = tuple(x.shape[1:])
    pad = ctx.input("PadValue").astype(x.dtype)
    if pad.size == 1:
        pad = pad.reshape(())
    enforce(pad.ndim == 0 or tuple(pad.shape) == feature, errors.InvalidArgument(
        "Input(PadValue) of sequence_pad must have shape [1] or %s, but got %s",
        list(feature), list(pad.shape)))
    out = xp.empty((lens.size, padded) + feature, dtype=x.dtype)
    out[...] = pad
    ids, pos = pad_positions(off)
    if ids.size:
        out[xp.asarray(ids), xp.asarray(pos)] = x
    ctx.set_output("Out", out, lod=[list(level) for level in tensor.lod[:-1]])
    ctx.set_output("Length", xp.asarray(lens.astype(np.int64)))


@register_kernel("sequence_pad_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_pad_grad_kernel(ctx):
    xp = ctx.xp
    x_tensor = ctx.input_tensor("X")
    dout = ctx.input(grad_var_name("Out"))
    off = np.asarray(last_level(x_tensor, "sequence_pad_grad"), dtype=np.int64)
    ids, pos = pad_positions(off)
    if ids.size:
        dx = dout[xp.asarray(ids), xp.asarray(pos)]
    else:
        dx = xp.zeros(tuple(x_tensor.shape), dtype=dout.dtype)
    ctx.set_output(grad_var_name("X"), xp.ascontiguousarray(dx))  # opkit: ignore[OPK004] fancy indexing copies
