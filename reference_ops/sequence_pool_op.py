"""sequence_pool: pools the rows of every sequence (last LoD level) into one row."""
import numpy as np

from opkit import (GradOpMaker, OpKernelType, OpMaker, OperatorWithKernel, enforce, errors,
                   grad_var_name, register_kernel, register_operator)

from reference_ops._sequence import (check_lod_level, last_level, scatter_add_rows,
                                     segment_argmax, segment_ids, segment_max, segment_sum)

POOL_TYPES = ("AVERAGE", "SUM", "SQRT", "MAX", "LAST", "FIRST")


class SequencePoolOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(LoDTensor) The variable-length input of SequencePoolOp; its "
                       "last LoD level delimits the sequences.")
        self.add_output("Out", "(Tensor) One pooled row per sequence; its LoD is X's without "
                        "the last level.")
        self.add_output("MaxIndex", "(Tensor<int32>) For MAX pooling: the row of X holding "
                        "each maximum, -1 for an empty sequence.").as_intermediate()
        self.add_attr("pooltype", "string", "(string, default 'AVERAGE') AVERAGE, SUM, SQRT, "
                      "MAX, LAST or FIRST.").set_default("AVERAGE").in_set(POOL_TYPES)
        self.add_attr("pad_value", "float", "(float, default 0.0) The output row of an empty "
                      "sequence.").set_default(0.0)
        self.add_attr("is_test", "bool", "(bool, default false) Inference only: MAX pooling "
                      "then skips MaxIndex.").set_default(False)
        self.add_comment(r"""Sequence Pool Operator.

For every sequence $s_i = X[o_i : o_{i+1}]$ of the last LoD level (length $L_i$):
$$Out_i = \sum_j s_{ij}\ (SUM),\quad \frac{1}{L_i}\sum_j s_{ij}\ (AVERAGE),\quad
\frac{1}{\sqrt{L_i}}\sum_j s_{ij}\ (SQRT),\quad \max_j s_{ij}\ (MAX),\quad
s_{i,L_i-1}\ (LAST),\quad s_{i,0}\ (FIRST)$$
and $Out_i = pad\_value$ when $L_i = 0$. Out's LoD is X's without its last level, e.g.
X with LoD [[0, 2, 2, 5]] gives 3 rows, the middle one pad_value. Unlike Paddle (which
rejects a batch with fewer rows than sequences), empty sequences anywhere, and a batch of
0 rows, are accepted.
""")


class SequencePoolOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of SequencePoolOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of SequencePoolOp should not be null.")
        level = check_lod_level(ctx, "X", 1, "sequence_pool")
        dims = list(ctx.get_input_dim("X"))
        # the number of sequences depends on the LoD values, not only on shapes: -1 here
        ctx.set_output_dim("Out", [-1] + dims[1:])
        ctx.set_lod_level("Out", level - 1)
        if ctx.attr("pooltype") == "MAX" and not ctx.attr("is_test") and \
                ctx.has_output("MaxIndex"):
            ctx.set_output_dim("MaxIndex", [-1] + dims[1:])
            ctx.set_output_dtype("MaxIndex", "int32")
            ctx.set_lod_level("MaxIndex", level - 1)

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class SequencePoolGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("sequence_pool_grad")
        op.set_input("X", self.input("X"))
        if self.attr("pooltype") == "MAX":
            op.set_input("MaxIndex", self.output("MaxIndex"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class SequencePoolGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input(grad_var_name("Out")),
                "Input(Out@GRAD) of SequencePoolGradOp should not be null.")
        if ctx.attr("pooltype") == "MAX":
            enforce(ctx.has_input("MaxIndex"), errors.InvalidArgument(
                "Input(MaxIndex) of SequencePoolGradOp is needed for MAX pooling (run the "
                "forward op with is_test=False)."))
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, grad_var_name("Out")), ctx.place)


register_operator("sequence_pool", SequencePoolOp, SequencePoolOpMaker,
                  grad_maker=SequencePoolGradMaker)
register_operator("sequence_pool_grad", SequencePoolGradOp, no_need_buffer=["X"])


def _out_lod(lod):
    return [list(level) for level in lod[:-1]]


# the GPU kernel of sequence_pool is a dedicated cupy kernel: reference_ops/gpu/
@register_kernel("sequence_pool", place="CPU", dtypes=("float32", "float64"))
def sequence_pool_kernel(ctx):
    xp = ctx.xp
    x = ctx.input("X")
    tensor = ctx.input_tensor("X")
    off = np.asarray(last_level(tensor, "sequence_pool"), dtype=np.int64)
    enforce(int(off[-1]) == x.shape[0], errors.InvalidArgument(
        "The last LoD offset of Input(X) of sequence_pool (%d) must equal its number of rows "
        "(%d)", int(off[-1]), x.shape[0]))
    pooltype = ctx.attr("pooltype")
    pad = ctx.attr("pad_value")
    lens = np.diff(off)
    n = lens.size
    nonempty = lens > 0
    bshape = (n,) + (1,) * (x.ndim - 1)
    if pooltype in ("SUM", "AVERAGE", "SQRT"):
        out = segment_sum(xp, x, off, empty_value=pad)
        if pooltype != "SUM":
            safe = np.where(nonempty, lens, 1).astype(np.float64)
            div = safe if pooltype == "AVERAGE" else np.sqrt(safe)
            div = np.where(nonempty, div, 1.0).astype(x.dtype).reshape(bshape)
            out = out / xp.asarray(div)
    elif pooltype == "MAX":
        out = segment_max(xp, x, off, empty_value=pad)
        if not ctx.attr("is_test") and ctx.has_output("MaxIndex"):
            index = segment_argmax(xp, x, off, seg_max=out)
            ctx.set_output("MaxIndex", index.astype(np.int32), lod=_out_lod(tensor.lod))
    else:  # LAST, FIRST
        rows = off[1:] - 1 if pooltype == "LAST" else off[:-1]
        rows = np.where(nonempty, rows, 0)
        out = xp.full((n,) + tuple(x.shape[1:]), pad, dtype=x.dtype)
        if nonempty.any():
            keep = xp.asarray(nonempty)
            out[keep] = x[xp.asarray(rows[nonempty])]
    ctx.set_output("Out", xp.ascontiguousarray(out.astype(x.dtype, copy=False)),
                   lod=_out_lod(tensor.lod))


@register_kernel("sequence_pool_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def sequence_pool_grad_kernel(ctx):
    xp = ctx.xp
    x_tensor = ctx.input_tensor("X")           # no_need_buffer: shape and LoD only
    dout = ctx.input(grad_var_name("Out"))
    off = np.asarray(last_level(x_tensor, "sequence_pool_grad"), dtype=np.int64)
    rows = int(off[-1])
    shape = (rows,) + tuple(x_tensor.shape[1:])
    pooltype = ctx.attr("pooltype")
    lens = np.diff(off)
    nonempty = lens > 0
    if pooltype in ("SUM", "AVERAGE", "SQRT"):
        ids = segment_ids(xp, off)
        dx = dout[ids] if rows else xp.zeros(shape, dtype=dout.dtype)
        if pooltype != "SUM" and rows:
            per_row = np.repeat(lens, lens).astype(np.float64)
            scale = 1.0 / (per_row if pooltype == "AVERAGE" else np.sqrt(per_row))
            dx = dx * xp.asarray(scale.astype(dout.dtype).reshape((-1,) + (1,) * (dx.ndim - 1)))
    elif pooltype == "MAX":
        width = int(np.prod(dout.shape[1:], dtype=np.int64))
        index = ctx.input("MaxIndex").astype(np.int64).reshape(dout.shape[0], width)
        flat_dout = dout.reshape(dout.shape[0], width)
        valid = index >= 0
        cols = xp.broadcast_to(xp.arange(width, dtype=np.int64)[None, :], index.shape)
        flat_index = index * width + cols
        dx = scatter_add_rows(xp, rows * width, flat_index[valid], flat_dout[valid])
        dx = dx.reshape(shape)
    else:
        dx = xp.zeros(shape, dtype=dout.dtype)
        src = off[1:] - 1 if pooltype == "LAST" else off[:-1]
        if nonempty.any():
            dx[xp.asarray(src[nonempty])] = dout[xp.asarray(nonempty)]
    ctx.set_output(grad_var_name("X"), xp.ascontiguousarray(dx.astype(dout.dtype, copy=False)))  # opkit: ignore[OPK004] fancy indexing copies


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

# the sequences (axis 0, the LoD) stay whole; every feature axis is pooled on its own. Every
# pooling but MAX is linear, when empty sequences get 0 (pad_value) rather than n pad values
_FEATURES = Where("i >= 1", lambda c, i: i >= 1)
_LINEAR = Where("attr(pooltype) != MAX and attr(pad_value) == 0",
                lambda c, i: str(c.attr("pooltype")).upper() != "MAX"
                and float(c.attr("pad_value")) == 0.0)
register_sbp("sequence_pool",
             Signature({"X": split("i"), "Out": split("i"), "MaxIndex": split("i")},
                       each="X", where=_FEATURES),
             Signature({"X": partial_sum, "Out": partial_sum}, where=_LINEAR))
register_sbp("sequence_pool_grad",
             Signature({"X": split("i"), "MaxIndex": split("i"), G("Out"): split("i"),
                        G("X"): split("i")}, each="X", where=_FEATURES),
             Signature({"X": broadcast, "MaxIndex": broadcast, G("Out"): partial_sum,
                        G("X"): partial_sum}))
