"""sequence_reverse: reverses the order of the rows inside every sequence (last LoD level)."""
import numpy as np

from opkit import (GradOpMaker, OpKernelType, OpMaker, OperatorWithKernel, enforce, errors,
                   register_kernel, register_operator)

from reference_ops._sequence import check_lod_level, last_level


class SequenceReverseOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(LoDTensor) The input; its last LoD level delimits the "
                       "sequences.")
        self.add_output("Y", "(LoDTensor) X with every sequence reversed; X's LoD.")
        self.add_comment(r"""Sequence Reverse Operator.

For every sequence $[o_i, o_{i+1})$ of the last LoD level:
$$Y[o_i + j] = X[o_{i+1} - 1 - j], \quad 0 \le j < o_{i+1} - o_i$$
e.g. X = [1, 2, 3, 4, 5] with LoD [[0, 2, 2, 5]] gives Y = [2, 1, 5, 4, 3]. Y shares X's
LoD; the gradient is the same permutation.
""")


class SequenceReverseOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SequenceReverseOp should not be null.")
        enforce(ctx.has_output("Y"), "Output(Y) of SequenceReverseOp should not be null.")
        check_lod_level(ctx, "X", 1, "sequence_reverse")
        dims = ctx.get_input_dim("X")
        enforce(len(dims) >= 2, errors.InvalidArgument(
            "Input(X) of sequence_reverse must have rank >= 2, but got shape %s", list(dims)))
        ctx.set_output_dim("Y", dims)
        ctx.share_lod("X", "Y")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class SequenceReverseGradMaker(GradOpMaker):
    def apply(self):
        # reversing is its own inverse: the gradient is sequence_reverse of Y@GRAD
        op = self.new_grad_op("sequence_reverse")
        op.set_input("X", self.output_grad("Y"))
        op.set_output("Y", self.input_grad("X"))
        return [op]


register_operator("sequence_reverse", SequenceReverseOp, SequenceReverseOpMaker,
                  grad_maker=SequenceReverseGradMaker)


def reverse_index(off: np.ndarray) -> np.ndarray:
    """Source row of every output row: s + e - 1 - r for row r of sequence [s, e)."""
    lens = np.diff(off)
    ids = np.repeat(np.arange(lens.size), lens)
    return (off[:-1] + off[1:] - 1)[ids] - np.arange(int(off[-1]), dtype=np.int64)


@register_kernel("sequence_reverse", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_reverse_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    off = np.asarray(last_level(ctx.input_tensor("X"), "sequence_reverse"), dtype=np.int64)
    enforce(int(off[-1]) == x.shape[0], errors.InvalidArgument(
        "The last LoD offset of Input(X) of sequence_reverse (%d) must equal its number of "
        "rows (%d)", int(off[-1]), x.shape[0]))
    idx = reverse_index(off)
    ctx.set_output("Y", x[xp.asarray(idx)])  # opkit: ignore[OPK004] fancy indexing copies


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, partial_sum, split  # noqa: E402

# the sequences (axis 0, the LoD) stay whole; any feature axis; linear (its grad op is
# sequence_reverse itself)
register_sbp("sequence_reverse",
             Signature({"X": split("i"), "Y": split("i")}, each="X",
                       where=Where("i >= 1", lambda c, i: i >= 1)),
             Signature({"X": partial_sum, "Y": partial_sum}))
