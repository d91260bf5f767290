"""sequence_concat: joins the i-th sequences of all inputs into the i-th output sequence."""
import numpy as np

from opkit import (GradOpMaker, OpKernelType, OpMaker, OperatorWithKernel, enforce, errors,
                   grad_var_name, register_kernel, register_operator)

from reference_ops._sequence import ragged_arange


class SequenceConcatOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(vector<LoDTensor>) The inputs; all with the same number of "
                       "sequences (last LoD level) and the same feature shape."
                       ).as_duplicable()
        self.add_output("Out", "(LoDTensor) Sequence i is X_0's sequence i, then X_1's, ...")
        self.add_comment(r"""Sequence Concat Operator.

With $x^k_i$ the i-th sequence (last LoD level) of the k-th input:
$$Out_i = [x^0_i; x^1_i; \ldots; x^{K-1}_i], \qquad |Out_i| = \sum_k |x^k_i|$$
e.g. X_0 LoD [[0, 2, 2]] and X_1 LoD [[0, 0, 3]] give Out LoD [[0, 2, 5]]. The upper LoD
levels (if any) must be equal across the inputs and are kept.
""")


class SequenceConcatOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Inputs(X) of SequenceConcatOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SequenceConcatOp should not be null.")
        dims = [list(d) for d in ctx.get_inputs_dim("X")]
        enforce(len(dims) >= 1, errors.InvalidArgument(
            "Inputs(X) of sequence_concat should hold at least one tensor, but received 0"))
        for i, d in enumerate(dims[1:], start=1):
            agree = len(d) == len(dims[0]) and all(
                a == b or a < 0 or b < 0 for a, b in zip(d[1:], dims[0][1:]))
            enforce(agree, errors.InvalidArgument(
                "Inputs(X) of sequence_concat must agree on every dimension but the first; "
                "X[0] has shape %s and X[%d] has shape %s", dims[0], i, d))
        names = ctx.input_names("X")
        levels = ctx.get_lod_levels("X")
        when = "run time" if ctx.is_runtime() else "compile time"
        for i, level in enumerate(levels):
            enforce(level >= 1, errors.InvalidArgument(
                "The LoD level of Input(X)[%d] ('%s') of sequence_concat must be at least 1, "
                "but it is %d at %s", i, names[i], level, when))
            enforce(level == levels[0], errors.InvalidArgument(
                "Inputs(X) of sequence_concat must share one LoD level, but X[0] has %d and "
                "X[%d] ('%s') has %d at %s", levels[0], i, names[i], level, when))
        total = -1 if any(d[0] < 0 for d in dims) else sum(d[0] for d in dims)
        rest = [max(col) if min(col) >= 0 else next((c for c in col if c >= 0), -1)
                for col in zip(*(d[1:] for d in dims))]   # a dim any input knows is known
        ctx.set_output_dim("Out", [total] + rest)
        ctx.share_lod("X", "Out")   # the LoD level; the kernel sets the new LoD

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class SequenceConcatGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("sequence_concat_grad")
        op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class SequenceConcatGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of SequenceConcatGradOp should not be null.")
        gx = grad_var_name("X")
        raw = ctx.op.outputs.get(gx) or []  # one name per X, "@EMPTY@" where no grad is wanted
        dims = ctx.get_inputs_dim("X")
        enforce(len(raw) <= len(dims), errors.InvalidArgument(
            "Output(X@GRAD) of SequenceConcatGradOp holds %d variables but Input(X) only %d",
            len(raw), len(dims)))
        ctx.set_outputs_dim(gx, dims[:len(raw)])
        present = ctx.output_names(gx)
        for k, name in enumerate(raw):
            if name in present:
                ctx.share_lod("X", gx, k, present.index(name))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("sequence_concat", SequenceConcatOp, SequenceConcatOpMaker,
                  grad_maker=SequenceConcatGradMaker)
register_operator("sequence_concat_grad", SequenceConcatGradOp, no_need_buffer=["X"])


def concat_plan(tensors, op: str):
    """(source row in the stacked inputs of every output row, output LoD, row bases)."""
    lods = [t.lod for t in tensors]
    for k, lod in enumerate(lods):
        enforce(len(lod) >= 1, errors.InvalidArgument(
            "Input(X)[%d] of %s must be a LoDTensor with at least one LoD level", k, op))
        enforce(len(lod) == len(lods[0]) and lod[:-1] == lods[0][:-1], errors.InvalidArgument(
            "Inputs(X) of %s must have the same upper LoD levels, but X[0] has %s and X[%d] "
            "has %s", op, lods[0], k, lod))
    offs = [np.asarray(lod[-1], dtype=np.int64) for lod in lods]
    n = offs[0].size - 1
    for k, off in enumerate(offs):
        enforce(off.size - 1 == n, errors.InvalidArgument(
            "Inputs(X) of %s must hold the same number of sequences, but X[0] holds %d and "
            "X[%d] holds %d", op, n, k, off.size - 1))
    rows = np.array([int(t.shape[0]) for t in tensors], dtype=np.int64)
    bases = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
    starts = np.stack([off[:-1] + bases[k] for k, off in enumerate(offs)], axis=1)  # [n, K]
    lens = np.stack([np.diff(off) for off in offs], axis=1)
    src = ragged_arange(starts.reshape(-1), lens.reshape(-1))     # sequence-major order
    out_last = np.concatenate([[0], np.cumsum(lens.sum(axis=1))]).astype(np.int64)
    out_lod = [list(level) for level in lods[0][:-1]] + [out_last.tolist()]
    return src, out_lod, bases


@register_kernel("sequence_concat", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_concat_kernel(ctx):
    xp = ctx.xp
    xs = ctx.inputs("X")
    src, out_lod, _ = concat_plan(ctx.input_tensors("X"), "sequence_concat")
    stacked = xp.concatenate(xs, axis=0)
    ctx.set_output("Out", stacked[xp.asarray(src)], lod=out_lod)


@register_kernel("sequence_concat_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_concat_grad_kernel(ctx):
    xp = ctx.xp
    tensors = ctx.input_tensors("X")
    dout = ctx.input(grad_var_name("Out"))
    src, _, bases = concat_plan(tensors, "sequence_concat_grad")
    stacked = xp.zeros((int(bases[-1]),) + tuple(dout.shape[1:]), dtype=dout.dtype)
    if src.size:
        stacked[xp.asarray(src)] = dout
    pieces = [xp.array(stacked[bases[k]:bases[k + 1]], copy=True) for k in range(len(tensors))]
    raw = ctx.op.outputs.get(grad_var_name("X")) or []
    if len(raw) == len(pieces):
        ctx.set_outputs(grad_var_name("X"), pieces)
    else:
        ctx.set_outputs(grad_var_name("X"), [p for p, n in zip(pieces, raw)
                                             if n and n != "@EMPTY@"])


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

# rows (axis 0, the LoD) stay whole; any feature axis; linear
_FEATURES = Where("i >= 1", lambda c, i: i >= 1)
register_sbp("sequence_concat",
             Signature({"X": split("i"), "Out": split("i")}, each="X", where=_FEATURES),
             Signature({"X": partial_sum, "Out": partial_sum}))
register_sbp("sequence_concat_grad",
             Signature({"X": split("i"), G("Out"): split("i"), G("X"): split("i")}, each="X",
                       where=_FEATURES),
             Signature({"X": broadcast, G("Out"): partial_sum, G("X"): partial_sum}))
