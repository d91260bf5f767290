"""Deliberately broken sequence_pool kernels: right on batches without empty sequences,
wrong on empty ones. Only the `lod` check's edge cases catch them.

* broken_sequence_pool_reduceat (SUM): `np.add.reduceat(x, starts)` — gives x[start]
  instead of 0 for an empty sequence, and fails for an empty last sequence (start == rows);
* broken_sequence_pool_last (LAST): `x[ends - 1]` — an empty sequence reads the previous
  sequence's last row (or, first in the batch, row -1: the batch's last row), and an
  all-empty batch indexes past the end.

Both reuse the correct `sequence_pool` proto, infer_shape and grad op.
"""
import numpy as np

from opkit import register_kernel, register_operator

from reference_ops.sequence_pool_op import (SequencePoolGradMaker, SequencePoolOp,
                                            SequencePoolOpMaker)

for _name in ("broken_sequence_pool_reduceat", "broken_sequence_pool_last"):
    register_operator(_name, SequencePoolOp, SequencePoolOpMaker,
                      grad_maker=SequencePoolGradMaker)


@register_kernel("broken_sequence_pool_reduceat", dtypes=("float32", "float64"))
def broken_reduceat_kernel(ctx):
    x = ctx.input("X")
    lod = ctx.input_tensor("X").lod
    starts = np.asarray(lod[-1][:-1], dtype=np.int64)
    out = np.add.reduceat(x, starts, axis=0)          # BUG: empty segments
    ctx.set_output("Out", out, lod=[list(level) for level in lod[:-1]])


@register_kernel("broken_sequence_pool_last", dtypes=("float32", "float64"))
def broken_last_kernel(ctx):
    x = ctx.input("X")
    lod = ctx.input_tensor("X").lod
    ends = np.asarray(lod[-1][1:], dtype=np.int64)
    out = x[ends - 1]                                  # BUG: empty sequences
    ctx.set_output("Out", out, lod=[list(level) for level in lod[:-1]])
