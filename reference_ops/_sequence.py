"""Vectorized segment helpers shared by the sequence_* ops.

Not an op module (no ``_op.py`` suffix): nothing here registers anything.

Every helper takes the array module ``xp`` (numpy or cupy) and works on one LoD level
given as *offsets* (``[0, 2, 2, 5]``: three sequences, the middle one empty). No helper
loops over sequences in Python. Empty sequences are handled explicitly everywhere:

* ``np.add.reduceat`` returns ``x[i]`` (not 0) for an empty segment ``[i, i)`` and fails
  for an index equal to ``len(x)`` (an empty last sequence), so :func:`segment_reduce` calls
  it only on the starts of the *non-empty* segments (for those the next non-empty start is
  exactly the segment's end) and fills the empty ones with the caller's value;
* on cupy (no ``reduceat``) the same results come from a padded gather with a mask.
"""
from __future__ import annotations

import numpy as np

from opkit import enforce, errors

__all__ = ["last_level", "offsets_array", "lengths_of", "segment_ids", "ragged_arange",
           "segment_reduce", "segment_sum", "segment_max", "segment_argmax",
           "scatter_add_rows", "check_lod_level"]


def last_level(tensor, op: str, slot: str = "X") -> list[int]:
    """The last (innermost) LoD level of an input tensor, as offsets."""
    lod = tensor.lod
    enforce(len(lod) >= 1, errors.InvalidArgument(
        "Input(%s) of %s must be a LoDTensor with at least one LoD level, but its LoD is "
        "empty (feed it as (array, [[lengths]]))", slot, op))
    return lod[-1]


def offsets_array(xp, offsets):
    return xp.asarray(np.asarray(offsets, dtype=np.int64))


def lengths_of(xp, offsets):
    off = offsets_array(xp, offsets)
    return off[1:] - off[:-1]


def segment_ids(xp, offsets):
    """Row -> index of the sequence holding it (rows of empty sequences do not exist)."""
    lens = np.diff(np.asarray(offsets, dtype=np.int64))
    ids = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
    return xp.asarray(ids)


def ragged_arange(starts, lengths) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for every (s, n) pair, without a Python loop.

    ``ragged_arange([5, 0, 9], [2, 0, 3]) == [5, 6, 9, 10, 11]``. Host (numpy) arrays in
    and out: index arithmetic on LoD offsets is cheap and the result is moved once.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum()) if lengths.size else 0
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    dst_starts = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - dst_starts, lengths)


def _padded_gather(xp, x, offsets):
    """(values [n, L, ...], mask [n, L]) with L the longest length; for the cupy path."""
    off = np.asarray(offsets, dtype=np.int64)
    lens = np.diff(off)
    n = lens.size
    width = int(lens.max()) if n else 0
    pos = np.arange(width, dtype=np.int64)
    mask = pos[None, :] < lens[:, None]
    idx = np.where(mask, off[:-1, None] + pos[None, :], 0)
    if x.shape[0] == 0:
        vals = xp.zeros((n, width) + tuple(x.shape[1:]), dtype=x.dtype)
    else:
        vals = x[xp.asarray(idx)]
    return vals, xp.asarray(mask)


def segment_reduce(xp, ufunc_name: str, x, offsets, empty_value):
    """Reduce the rows of each segment with ``add`` or ``maximum``; empty segments get
    ``empty_value``. Shape: ``[num_sequences, *x.shape[1:]]``."""
    off = np.asarray(offsets, dtype=np.int64)
    n = off.size - 1
    out_shape = (n,) + tuple(x.shape[1:])
    nonempty = off[1:] > off[:-1]
    if xp is np:
        out = np.full(out_shape, empty_value, dtype=x.dtype)
        if nonempty.any():
            lens = off[1:] - off[:-1]
            longest = int(lens.max())
            if longest * 8 <= n and x.ndim >= 2:
                out[nonempty] = _by_position(ufunc_name, x, off[:-1][nonempty],
                                             lens[nonempty], longest)
            else:
                ufunc = getattr(np, ufunc_name)
                out[nonempty] = ufunc.reduceat(x, off[:-1][nonempty], axis=0)
        return out
    vals, mask = _padded_gather(xp, x, off)
    m = mask.reshape(mask.shape + (1,) * (x.ndim - 1))
    if ufunc_name == "add":
        red = xp.where(m, vals, 0).sum(axis=1) if vals.shape[1] else \
            xp.zeros(out_shape, dtype=x.dtype)
    else:
        low = xp.asarray(-np.inf, dtype=x.dtype)
        red = xp.where(m, vals, low).max(axis=1) if vals.shape[1] else \
            xp.zeros(out_shape, dtype=x.dtype)
    ne = xp.asarray(nonempty).reshape((n,) + (1,) * (x.ndim - 1))
    return xp.where(ne, red, xp.asarray(empty_value, dtype=x.dtype)).astype(x.dtype)


def _by_position(ufunc_name: str, x, starts, lens, longest: int):
    """Reduce non-empty segments position by position: step j combines row j of every
    segment longer than j (one vectorized gather per position, `longest` steps, rows added
    in order as a per-sequence loop would). Much faster than `reduceat` along axis 0 for
    many short sequences; used when the longest sequence is short relative to their number."""
    order = np.argsort(-lens, kind="stable")
    lens_sorted = lens[order]
    starts_sorted = starts[order]
    # live[j]: how many segments are longer than j (they come first in `order`)
    live = np.searchsorted(-lens_sorted, -np.arange(1, longest + 1), side="right")
    acc = x[starts_sorted].copy()
    ufunc = getattr(np, ufunc_name)
    for j in range(1, longest):
        k = int(live[j])
        if k == 0:
            break
        ufunc(acc[:k], x[starts_sorted[:k] + j], out=acc[:k])
    out = np.empty_like(acc)
    out[order] = acc
    return out


def segment_sum(xp, x, offsets, empty_value=0.0):
    return segment_reduce(xp, "add", x, offsets, empty_value)


def segment_max(xp, x, offsets, empty_value=0.0):
    return segment_reduce(xp, "maximum", x, offsets, empty_value)


def segment_argmax(xp, x, offsets, seg_max=None):
    """Absolute row index of the (first) maximum of each segment and column; -1 for an
    empty segment. Shape ``[num_sequences, *x.shape[1:]]``, int64."""
    off = np.asarray(offsets, dtype=np.int64)
    n = off.size - 1
    if seg_max is None:
        seg_max = segment_max(xp, x, off)
    out_shape = (n,) + tuple(x.shape[1:])
    if x.shape[0] == 0:
        return xp.full(out_shape, -1, dtype=np.int64)
    ids = segment_ids(xp, off)
    rows = xp.arange(x.shape[0], dtype=np.int64).reshape((-1,) + (1,) * (x.ndim - 1))
    big = np.int64(x.shape[0])
    at_max = seg_max[ids]
    # rows holding the max, else `big`; a NaN maximum is held by the segment's NaN rows
    cand = xp.where((x == at_max) | (xp.isnan(x) & xp.isnan(at_max)), rows, big)
    cand = xp.broadcast_to(cand, x.shape)
    if xp is np:
        nonempty = off[1:] > off[:-1]
        out = np.full(out_shape, -1, dtype=np.int64)
        if nonempty.any():
            out[nonempty] = np.minimum.reduceat(cand, off[:-1][nonempty], axis=0)
        return out
    vals, mask = _padded_gather(xp, cand, off)
    m = mask.reshape(mask.shape + (1,) * (x.ndim - 1))
    red = xp.where(m, vals, big).min(axis=1) if vals.shape[1] else \
        xp.full(out_shape, big, dtype=np.int64)
    return xp.where(red == big, -1, red).astype(np.int64)


def scatter_add_rows(xp, rows: int, index, values):
    """``out[index[i]] += values[i]`` for every i (repeated indices add), out has ``rows``
    rows."""
    out = xp.zeros((rows,) + tuple(values.shape[1:]), dtype=values.dtype)
    if values.shape[0] == 0:
        return out
    index = xp.asarray(index)
    if xp is np:
        np.add.at(out, index, values)  # sequential: deterministic
        return out
    # GPU: scatter_add uses atomics, whose order (and so the float sum) changes from run to
    # run. Sort by target row (stable), then add each row's run with a float64 prefix sum:
    # the same bits on every run.
    order = xp.argsort(index, kind="stable")
    idx = index[order]
    csum = xp.cumsum(values[order].astype(np.float64), axis=0)
    last = xp.nonzero(xp.concatenate([idx[1:] != idx[:-1], xp.ones(1, dtype=bool)]))[0]
    totals = csum[last]
    totals[1:] -= csum[last[:-1]]
    out[idx[last]] = totals.astype(values.dtype)
    return out


def check_lod_level(ctx, slot: str, minimum: int, op: str, maximum: int | None = None) -> int:
    """Validate the LoD level of input `slot` in infer_shape, at compile time (the variable's
    declared lod_level) or at run time (the tensor's LoD). Returns the level."""
    level = ctx.get_lod_level(slot)
    when = "run time" if ctx.is_runtime() else "compile time"
    enforce(level >= minimum, errors.InvalidArgument(
        "The LoD level of Input(%s) of %s must be at least %d, but it is %d at %s (feed it "
        "as (array, [[lengths]]) or declare the variable with lod_level=%d)", slot, op,
        minimum, level, when, minimum))
    if maximum is not None:
        enforce(level <= maximum, errors.InvalidArgument(
            "The LoD level of Input(%s) of %s must be at most %d, but it is %d at %s",
            slot, op, maximum, level, when))
    return level

