"""lookup_table: Out[i] = W[Ids[i]] (an embedding lookup); sparse or dense gradient."""
import numpy as np

from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, SelectedRows,
                   register_operator, register_kernel, grad_var_name, enforce, errors)
from reference_ops._extra import add_extra_attrs
from opkit.framework import domains as D

NO_PADDING = -1


class LookupTableOpMaker(OpMaker):
    def make(self):
        self.add_input("W", "(Tensor) The lookup table, shape [V, D]: one row of D values per "
                       "id in [0, V).")
        self.add_input("Ids", "(Tensor, int64) The ids to look up, shape [N, 1] (or [N]); "
                       "each must be in [0, V).")
        self.add_output("Out", "(Tensor) The rows of W selected by Ids, shape [N, D]; it "
                        "shares the LoD of Ids.")
        self.add_attr("is_sparse", "bool", "(bool, default false) Whether the gradient of W "
                      "is a SelectedRows (rows = Ids, height = V, value = dOut) instead of a "
                      "dense [V, D] tensor.", default=False)
        self.add_attr("padding_idx", "long", "(int64, default -1) An id whose output row is "
                      "all zeros and whose row of W gets no gradient; -1 means no padding.",
                      default=NO_PADDING)
        add_extra_attrs(self, "is_distributed", "remote_prefetch", "trainer_id",
                        "height_sections", "epmap", "table_names")
        # declared domains (docs/domains.md)
        self.proto.input("W").as_parameter()
        self.proto.input("Ids").set_domain(D.integers(0, D.dim("W", 0)))
        self.add_comment(r"""Lookup Table (embedding) operator.

Looks up the rows of the table W selected by the ids:
$$Out_{i,:} = W_{Ids_i,:}$$
and $Out_{i,:} = 0$ where $Ids_i = padding\_idx$ (padding_idx = -1: none).
The gradient adds dOut back into the looked-up rows:
$$dW_{v,:} = \sum_{i: Ids_i = v,\ Ids_i \ne padding\_idx} dOut_{i,:}$$
With is_sparse it is a SelectedRows with rows = Ids (duplicates kept),
height = V and value = dOut (padding rows zeroed); `sgd` merges the
duplicate rows before it updates W.
""")


def out_dims(ids_dims, width):
    """Out's dims: Ids' dims with the trailing 1 replaced by D (Paddle: Ids [..., 1] gives
    Out [..., D]); a 1-D Ids [N] gives [N, D]."""
    ids_dims = [int(d) for d in ids_dims]
    enforce(len(ids_dims) == 1 or ids_dims[-1] in (1, -1), errors.InvalidArgument(
        "Input(Ids) of LookupTableOp should have shape [..., 1] (or [N]), but its shape is "
        "%s.", ids_dims))
    return (ids_dims if len(ids_dims) == 1 else ids_dims[:-1]) + [int(width)]


class LookupTableOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("W"), "Input(W) of LookupTableOp should not be null.")
        enforce(ctx.has_input("Ids"), "Input(Ids) of LookupTableOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of LookupTableOp should not be null.")
        w_dims = list(ctx.get_input_dim("W"))
        ids_dims = list(ctx.get_input_dim("Ids"))
        enforce(len(w_dims) == 2, errors.InvalidArgument(
            "Input(W) of LookupTableOp should be a 2-D table [V, D], but its shape is %s.",
            w_dims))
        ctx.set_output_dim("Out", out_dims(ids_dims, w_dims[1]))
        ctx.share_lod("Ids", "Out")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "W"), ctx.place)


class LookupTableGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("lookup_table_grad")
        op.set_input("W", self.input("W"))
        op.set_input("Ids", self.input("Ids"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("W"), self.input_grad("W"))
        return [op]


class LookupTableGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("W"), "Input(W) of LookupTableGradOp should not be null.")
        enforce(ctx.has_input("Ids"), "Input(Ids) of LookupTableGradOp should not be null.")
        if not ctx.attr("is_sparse"):  # a SelectedRows output has no dense shape to check
            ctx.set_output_dim(grad_var_name("W"), ctx.get_input_dim("W"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "W"), ctx.place)


register_operator("lookup_table", LookupTableOp, LookupTableOpMaker,
                  grad_maker=LookupTableGradMaker)
register_operator("lookup_table_grad", LookupTableGradOp, no_need_buffer=["W"])


def _flat_ids(ctx, height):
    ids = ctx.input("Ids")
    enforce(ids.dtype.kind in "iu", errors.InvalidArgument(
        "Input(Ids) of LookupTableOp should be an integer tensor (int64), but it is %s.",
        ids.dtype))
    ids = ids.reshape(-1)
    if ids.size:
        lo, hi = int(ids.min()), int(ids.max())
        enforce(lo >= 0 and hi < height, errors.OutOfRange(
            "Input(Ids) of LookupTableOp should be in [0, %d) (the rows of W), but it holds "
            "ids from %d to %d.", height, lo, hi))
    return ids.astype(np.int64)


# int8 and int16 tables too (Paddle 2.x: quantized embeddings); the gradient is float only
@register_kernel("lookup_table", place=("CPU", "GPU"),
                 dtypes=("float32", "float64", "int8", "int16"))
def lookup_table_kernel(ctx):
    xp = ctx.xp
    w = ctx.input("W")
    ids = _flat_ids(ctx, w.shape[0])
    out = xp.take(w, ids, axis=0)           # a new array: Out owns its buffer
    padding_idx = ctx.attr("padding_idx")
    if padding_idx != NO_PADDING:
        out[ids == padding_idx] = 0
    shape = tuple(out_dims(ctx.input_tensor("Ids").shape, w.shape[1]))
    ctx.set_output("Out", xp.reshape(out, shape))


@register_kernel("lookup_table_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def lookup_table_grad_kernel(ctx):
    xp = ctx.xp
    w_t = ctx.input_tensor("W")          # no_need_buffer: shape and dtype only
    height, width = int(w_t.shape[0]), int(w_t.shape[1])
    ids = _flat_ids(ctx, height)
    dout = ctx.input(grad_var_name("Out")).reshape(-1, width)
    padding_idx = ctx.attr("padding_idx")
    keep = None if padding_idx == NO_PADDING else (ids != padding_idx)
    if ctx.attr("is_sparse"):
        value = xp.array(dout, copy=True)
        if keep is not None:
            value[~keep] = 0
        var = ctx.output_var(grad_var_name("W"))
        if var is not None:
            var.set_value(SelectedRows([int(i) for i in ids.tolist()], height, value))
        return
    dw = xp.zeros((height, width), dtype=dout.dtype)
    rows, vals = (ids, dout) if keep is None else (ids[keep], dout[keep])
    if xp is np:
        np.add.at(dw, rows, vals)           # deterministic: accumulates in index order
    else:
        hot = (xp.arange(height)[:, None] == rows[None, :]).astype(dout.dtype)
        dw = xp.matmul(hot, vals)
    ctx.set_output(grad_var_name("W"), dw)


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

# split the ids (any axis but a trailing 1, which _too_small leaves out) or the embedding
# columns; splitting W's rows would need each device to offset and mask the ids
register_sbp("lookup_table",
             Signature({"Ids": split("i"), "W": broadcast, "Out": split("i")}, each="Ids"),
             Signature({"Ids": broadcast, "W": split(1), "Out": split(-1)}))
register_sbp("lookup_table_grad",
             Signature({"Ids": split("i"), "W": broadcast, G("Out"): split("i"),
                        G("W"): partial_sum}, each="Ids"),
             Signature({"Ids": broadcast, "W": split(1), G("Out"): split(-1), G("W"): split(1)}),
             Signature({"Ids": broadcast, "W": broadcast, G("Out"): partial_sum,
                        G("W"): partial_sum}))
