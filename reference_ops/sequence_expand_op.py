"""sequence_expand: repeats every sequence (or row) of X as many times as Y's reference LoD
level says."""
import numpy as np

from opkit import (GradOpMaker, OpKernelType, OpMaker, OperatorWithKernel, enforce, errors,
                   grad_var_name, register_kernel, register_operator)

from reference_ops._sequence import check_lod_level, ragged_arange, scatter_add_rows


class SequenceExpandOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(LoDTensor) The input; a Tensor (each row one sequence) or a "
                       "LoDTensor with one LoD level.")
        self.add_input("Y", "(LoDTensor) Only its LoD is used: level ref_level gives the "
                       "repeat count of every sequence of X.")
        self.add_output("Out", "(LoDTensor) The expanded X; with X's LoD level.")
        self.add_attr("ref_level", "int", "(int, default -1) The LoD level of Y to expand by; "
                      "-1 is the last one.").set_default(-1)
        self.add_comment(r"""Sequence Expand Operator.

With $r_i = y_{i+1} - y_i$ from Y's LoD level ref_level and $x_i$ the i-th sequence of X
(its i-th row when X has no LoD):
$$Out = [\underbrace{x_0, \ldots, x_0}_{r_0}, \underbrace{x_1, \ldots, x_1}_{r_1}, \ldots]$$
Out's LoD (when X has one) holds one sequence per copy: X LoD [[0, 2, 2, 3]] and Y level
[[0, 1, 3, 3]] give Out rows x[0:2], x[2:2] twice, nothing; Out LoD [[0, 2, 2, 2]].
""")


class SequenceExpandOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SequenceExpandOp should not be null.")
        enforce(ctx.has_input("Y"), "Input(Y) of SequenceExpandOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SequenceExpandOp should not be null.")
        check_lod_level(ctx, "X", 0, "sequence_expand", maximum=1)
        y_level = check_lod_level(ctx, "Y", 1, "sequence_expand")
        ref = ctx.attr("ref_level")
        enforce(ref == -1 or 0 <= ref < y_level, errors.InvalidArgument(
            "Attr(ref_level) of sequence_expand must be -1 or in [0, %d) (the LoD levels of "
            "Input(Y)), but got %d", y_level, ref))
        dims = list(ctx.get_input_dim("X"))
        ctx.set_output_dim("Out", [-1] + dims[1:])
        ctx.share_lod("X", "Out")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class SequenceExpandGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("sequence_expand_grad")
        op.set_input("X", self.input("X"))
        op.set_input("Y", self.input("Y"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class SequenceExpandGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of SequenceExpandGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("sequence_expand", SequenceExpandOp, SequenceExpandOpMaker,
                  grad_maker=SequenceExpandGradMaker)
register_operator("sequence_expand_grad", SequenceExpandGradOp, no_need_buffer=["X", "Y"])


def expand_plan(x_tensor, y_tensor, ref_level: int, op: str):
    """(source row of every output row, output LoD or None) for sequence_expand."""
    rows = int(x_tensor.shape[0])
    y_lod = y_tensor.lod
    enforce(len(y_lod) >= 1, errors.InvalidArgument(
        "Input(Y) of %s must have a LoD (its level ref_level gives the repeat counts)", op))
    ref = np.asarray(y_lod[ref_level], dtype=np.int64)
    repeats = np.diff(ref)
    if x_tensor.lod:
        x_off = np.asarray(x_tensor.lod[0], dtype=np.int64)
    else:
        x_off = np.arange(rows + 1, dtype=np.int64)
    enforce(x_off.size - 1 == repeats.size, errors.InvalidArgument(
        "%s: Input(X) holds %d sequences (rows when it has no LoD) but level %d of Input(Y)'s "
        "LoD holds %d; they must be equal", op, x_off.size - 1, ref_level, repeats.size))
    x_lens = np.diff(x_off)
    copy_starts = np.repeat(x_off[:-1], repeats)      # one entry per copy
    copy_lens = np.repeat(x_lens, repeats)
    src = ragged_arange(copy_starts, copy_lens)
    out_lod = None
    if x_tensor.lod:
        out_lod = [np.concatenate([[0], np.cumsum(copy_lens)]).astype(np.int64).tolist()]
    return src, out_lod


@register_kernel("sequence_expand", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_expand_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    src, out_lod = expand_plan(ctx.input_tensor("X"), ctx.input_tensor("Y"),
                               ctx.attr("ref_level"), "sequence_expand")
    out = x[xp.asarray(src)] if src.size else xp.zeros((0,) + tuple(x.shape[1:]), x.dtype)
    ctx.set_output("Out", out, lod=out_lod if out_lod is not None else [])  # opkit: ignore[OPK004] fancy indexing copies


@register_kernel("sequence_expand_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_expand_grad_kernel(ctx):
    xp = ctx.xp
    x_tensor = ctx.input_tensor("X")
    dout = ctx.input(grad_var_name("Out"))
    src, _ = expand_plan(x_tensor, ctx.input_tensor("Y"), ctx.attr("ref_level"),
                         "sequence_expand_grad")
    dx = scatter_add_rows(xp, int(x_tensor.shape[0]), xp.asarray(src), dout)
    ctx.set_output(grad_var_name("X"), dx.reshape(tuple(x_tensor.shape)))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

# rows (axis 0, the LoD) stay whole; any feature axis of X; Y gives only its LoD; linear in X
_FEATURES = Where("i >= 1", lambda c, i: i >= 1)
register_sbp("sequence_expand",
             Signature({"X": split("i"), "Y": broadcast, "Out": split("i")}, each="X",
                       where=_FEATURES),
             Signature({"X": partial_sum, "Y": broadcast, "Out": partial_sum}))
register_sbp("sequence_expand_grad",
             Signature({"X": split("i"), "Y": broadcast, G("Out"): split("i"),
                        G("X"): split("i")}, each="X", where=_FEATURES),
             Signature({"X": broadcast, "Y": broadcast, G("Out"): partial_sum,
                        G("X"): partial_sum}))
