"""Dedicated cupy kernels, as plain functions on cupy arrays.

Everything here is built on first use: importing this module needs neither cupy nor a GPU.
The functions run on cupy's *current* stream (inside a kernel: the op's device context
stream, which `OperatorWithKernel.run_impl` enters), never synchronize, and never read a
value back to the host.

Accuracy: float32 sums of `sequence_pool` are accumulated in double.

Determinism: every reduction here gives the same bits on every run (one thread or one
block owns each output element and adds in a fixed order; no atomics). The one faster,
nondeterministic variant (`sequence_pool` SUM/AVERAGE/SQRT with atomics, for a few long
sequences) runs only when `nondeterministic_allowed()`: the environment variable
`OPKIT_GPU_NONDETERMINISTIC=1` (read on every call).
"""
from __future__ import annotations

import functools
import os

import numpy as np

__all__ = ["elementwise_add", "softmax", "sum_n", "concat", "sequence_pool",
           "nondeterministic_allowed", "NONDETERMINISTIC_ENV", "POOL_TYPES"]

NONDETERMINISTIC_ENV = "OPKIT_GPU_NONDETERMINISTIC"
POOL_TYPES = {"AVERAGE": 0, "SUM": 1, "SQRT": 2, "MAX": 3, "LAST": 4, "FIRST": 5}
_CTYPE = {np.dtype("float32"): "float", np.dtype("float64"): "double"}
_THREADS = 256


def nondeterministic_allowed() -> bool:
    """True when OPKIT_GPU_NONDETERMINISTIC=1: faster kernels that add with atomics (the
    order of the additions, hence the last bits of the result, may change between runs)."""
    return os.environ.get(NONDETERMINISTIC_ENV, "") == "1"


def _cp():
    import cupy

    return cupy


def _ctype(dtype) -> str:
    try:
        return _CTYPE[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"the dedicated GPU kernels take float32 or float64, not {dtype}") \
            from None


def _grid(n: int, threads: int = _THREADS) -> int:
    return max(1, min((int(n) + threads - 1) // threads, 65535 * 32))


def _table(values):
    """A small int64 table on the device (kernel arguments of variable length): one
    asynchronous host->device copy on the current stream."""
    cp = _cp()
    return cp.asarray(np.asarray(values, dtype=np.int64))


# --------------------------------------------------------------------------------------
# elementwise_add: Out = X + Y, Y broadcast by Paddle's (pre, n, post) rule
# --------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _add_same_kernel():
    cp = _cp()
    return cp.ElementwiseKernel("T x, T y", "T z", "z = x + y", "opkit_elementwise_add")


@functools.lru_cache(maxsize=None)
def _add_bcast_kernel():
    cp = _cp()
    # Y is a contiguous block of n values; output element i (C order over X's shape) reads
    # Y[(i / post) % n] -- Paddle's pre x n x post decomposition, one launch (any X strides).
    return cp.ElementwiseKernel("T x, raw T y, int64 n, int64 post", "T z",
                                "z = x + y[(i / post) % n]", "opkit_elementwise_add_bcast")


_ADD_SRC = r"""
extern "C" __global__ void opkit_elementwise_add_@T@(const @T@* __restrict__ x,
                                                     const @T@* __restrict__ y,
                                                     @T@* __restrict__ z, unsigned int size,
                                                     unsigned int n, unsigned int post) {
    // X contiguous, fewer than 2^32 elements: 32-bit index arithmetic
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < size;
         i += blockDim.x * gridDim.x)
        z[i] = x[i] + y[(i / post) % n];
}
"""


@functools.lru_cache(maxsize=None)
def _add_bcast32_kernel(ctype: str):
    cp = _cp()
    return cp.RawKernel(_ADD_SRC.replace("@T@", ctype), f"opkit_elementwise_add_{ctype}")


def _pre_n_post(x_shape, view):
    """(n, post) when the non-1 dims of Y's view are one contiguous run that equals X's dims
    there (then Y, flattened, is indexed by (i // post) % n); None otherwise."""
    idx = [k for k, v in enumerate(view) if v != 1]
    if not idx:
        return 1, 1
    start, stop = idx[0], idx[-1] + 1
    if any(view[k] != x_shape[k] for k in range(start, stop)):
        return None  # a 1 inside the run that broadcasts: not a single block
    n = int(np.prod(x_shape[start:stop], dtype=np.int64))
    post = int(np.prod(x_shape[stop:], dtype=np.int64))
    return n, post


def elementwise_add(x, y, axis: int = -1):
    """X + Y with Paddle's elementwise broadcast (`axis`), one kernel launch, a new array."""
    from reference_ops._common import elementwise_y_view_shape

    cp = _cp()
    _ctype(x.dtype)
    if x.shape == y.shape:
        return _add_same_kernel()(x, y)
    view = elementwise_y_view_shape(x.shape, y.shape, axis)
    npost = _pre_n_post(x.shape, view)
    if npost is None:
        return cp.add(x, y.reshape(tuple(view)))
    n, post = npost
    out = cp.empty(x.shape, dtype=x.dtype)
    if out.size == 0:
        return out
    y = cp.ascontiguousarray(y)
    if x.flags.c_contiguous and out.size < 2**32:
        _add_bcast32_kernel(_ctype(x.dtype))(
            (_grid(out.size, _THREADS),), (_THREADS,),
            (x, y, out, np.uint32(out.size), np.uint32(n), np.uint32(max(post, 1))))
        return out
    return _add_bcast_kernel()(x, y, np.int64(n), np.int64(max(post, 1)), out)


# --------------------------------------------------------------------------------------
# softmax: one block per row (the row is the `axis` dimension, with stride `post`)
# --------------------------------------------------------------------------------------
_SOFTMAX_SRC = r"""
#define ACC_MAX(a, b) (((b) > (a) || (b) != (b)) ? (b) : (a))   /* NaN propagates, as numpy */

// post == 1: one block per row. The row is read once into shared memory when it fits
// (cached != 0), else three times from global memory. Fixed reduction tree: deterministic.
extern "C" __global__ void opkit_softmax_rows_@T@(const @T@* __restrict__ x,
                                                  @T@* __restrict__ out, long long n,
                                                  long long rows, int cached) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    @T@* red = reinterpret_cast<@T@*>(smem_raw);          // blockDim.x values
    @T@* row = red + blockDim.x;                           // n values when cached
    const int tid = threadIdx.x;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const @T@* xr = x + r * n;
        @T@* orow = out + r * n;
        @T@ m = xr[0];
        for (long long k = tid; k < n; k += blockDim.x) {
            const @T@ v = xr[k];
            if (cached) row[k] = v;
            m = ACC_MAX(m, v);
        }
        red[tid] = m;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) red[tid] = ACC_MAX(red[tid], red[tid + s]);
            __syncthreads();
        }
        m = red[0];
        __syncthreads();
        @T@ acc = 0;
        for (long long k = tid; k < n; k += blockDim.x) {
            const @T@ e = exp((cached ? row[k] : xr[k]) - m);
            if (cached) row[k] = e;
            acc += e;
        }
        red[tid] = acc;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) red[tid] += red[tid + s];
            __syncthreads();
        }
        const @T@ total = red[0];
        for (long long k = tid; k < n; k += blockDim.x)
            orow[k] = (cached ? row[k] : exp(xr[k] - m)) / total;
        __syncthreads();
    }
}

// post > 1: a block of 32 x 8 threads owns 32 neighbouring columns q of one p (reads are
// coalesced along q); the 8 rows of threads split k and are combined in a fixed order.
extern "C" __global__ void opkit_softmax_cols_@T@(const @T@* __restrict__ x,
                                                  @T@* __restrict__ out, long long pre,
                                                  long long n, long long post) {
    __shared__ @T@ red[8][33];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long tiles = (post + 31) / 32;
    for (long long t = blockIdx.x; t < pre * tiles; t += gridDim.x) {
        const long long p = t / tiles, q = (t % tiles) * 32 + tx;
        const bool live = q < post;
        const @T@* xc = x + p * n * post + q;
        @T@* oc = out + p * n * post + q;
        @T@ m = live ? xc[0] : (@T@)0;
        if (live) for (long long k = ty; k < n; k += 8) m = ACC_MAX(m, xc[k * post]);
        red[ty][tx] = m;
        __syncthreads();
        m = red[0][tx];
        for (int j = 1; j < 8; ++j) m = ACC_MAX(m, red[j][tx]);
        __syncthreads();
        @T@ acc = 0;
        if (live) for (long long k = ty; k < n; k += 8) acc += exp(xc[k * post] - m);
        red[ty][tx] = acc;
        __syncthreads();
        @T@ total = red[0][tx];
        for (int j = 1; j < 8; ++j) total += red[j][tx];
        __syncthreads();
        if (live) for (long long k = ty; k < n; k += 8) oc[k * post] = exp(xc[k * post] - m) / total;
    }
}
"""

_SHARED_LIMIT = 48 * 1024


@functools.lru_cache(maxsize=None)
def _softmax_module(ctype: str):
    cp = _cp()
    return cp.RawModule(code=_SOFTMAX_SRC.replace("@T@", ctype))


def softmax(x, axis: int = -1):
    """softmax of `x` along `axis`: one block per row (post == 1) or per 32 columns, fixed
    reduction trees (deterministic)."""
    cp = _cp()
    ctype = _ctype(x.dtype)
    axis = axis + x.ndim if axis < 0 else axis
    x = cp.ascontiguousarray(x)
    if x.size == 0:
        return cp.zeros_like(x)
    out = cp.empty_like(x)
    n = int(x.shape[axis])
    post = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    pre = x.size // (n * post)
    module = _softmax_module(ctype)
    item = x.dtype.itemsize
    if post == 1:
        threads, cap = 32, (1024 if n >= 8192 else 256)
        while threads < n and threads < cap:
            threads *= 2
        cached = (threads + n) * item <= _SHARED_LIMIT
        shared = (threads + (n if cached else 0)) * item
        module.get_function(f"opkit_softmax_rows_{ctype}")(
            (max(1, min(pre, 1 << 20)),), (threads,),
            (x, out, np.int64(n), np.int64(pre), np.int32(cached)), shared_mem=shared)
        return out
    tiles = pre * ((post + 31) // 32)
    module.get_function(f"opkit_softmax_cols_{ctype}")(
        (max(1, min(tiles, 1 << 20)),), (32, 8), (x, out, np.int64(pre), np.int64(n),
                                                  np.int64(post)))
    return out


# --------------------------------------------------------------------------------------
# sum: Out = X0 + X1 + ... in one launch, added left to right (same bits as the CPU loop)
# --------------------------------------------------------------------------------------
_SUM_SRC = r"""
extern "C" __global__ void opkit_sum_n_@T@(const long long* __restrict__ ptrs, int k,
                                           @T@* __restrict__ out, long long size) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < size;
         i += (long long)blockDim.x * gridDim.x) {
        @T@ acc = reinterpret_cast<const @T@*>(ptrs[0])[i];
        for (int j = 1; j < k; ++j) acc = acc + reinterpret_cast<const @T@*>(ptrs[j])[i];
        out[i] = acc;
    }
}
"""


@functools.lru_cache(maxsize=None)
def _sum_kernel(ctype: str):
    cp = _cp()
    return cp.RawKernel(_SUM_SRC.replace("@T@", ctype), f"opkit_sum_n_{ctype}",
                        options=("--fmad=false",))


def sum_n(xs):
    """X0 + X1 + ... (same shapes), one launch for all inputs, a new array."""
    cp = _cp()
    ctype = _ctype(xs[0].dtype)
    xs = [x if x.flags.c_contiguous else cp.ascontiguousarray(x) for x in xs]
    out = cp.empty(xs[0].shape, dtype=xs[0].dtype)
    if out.size == 0:
        return out
    if len(xs) == 1:
        out[...] = xs[0]
        return out
    ptrs = _table([x.data.ptr for x in xs])
    _sum_kernel(ctype)((_grid(out.size),), (_THREADS,),
                       (ptrs, np.int32(len(xs)), out, np.int64(out.size)))
    return out


# --------------------------------------------------------------------------------------
# concat: one kernel for all inputs when axis >= 1 (Paddle's lesson: not one copy each)
# --------------------------------------------------------------------------------------
_CONCAT_SRC = r"""
extern "C" __global__ void opkit_concat_@T@(const long long* __restrict__ table, int k,
                                            @T@* __restrict__ out, long long outer,
                                            long long total_cols) {
    // table[0:k] input pointers, table[k:2k+1] column offsets of the inputs in a row of out.
    // A thread owns one output column: it finds its input once, then copies that column
    // for the rows blockIdx.y, blockIdx.y + gridDim.y, ... (coalesced along the columns).
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= total_cols) return;
    const long long* col_off = table + k;
    int lo = 0, hi = k;                       // largest j with col_off[j] <= c
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (col_off[mid] <= c) lo = mid; else hi = mid;
    }
    const long long w = col_off[lo + 1] - col_off[lo], cc = c - col_off[lo];
    const @T@* src = reinterpret_cast<const @T@*>(table[lo]) + cc;
    @T@* dst = out + c;
    for (long long o = blockIdx.y; o < outer; o += gridDim.y) dst[o * total_cols] = src[o * w];
}
"""


@functools.lru_cache(maxsize=None)
def _concat_kernel(ctype: str):
    cp = _cp()
    return cp.RawKernel(_CONCAT_SRC.replace("@T@", ctype), f"opkit_concat_{ctype}")


def concat(xs, axis: int = 0):
    """Concatenate along `axis`: axis 0 is one contiguous copy per input (cupy); axis >= 1
    is one kernel launch that reads every input."""
    cp = _cp()
    ctype = _ctype(xs[0].dtype)
    ndim = xs[0].ndim
    axis = axis + ndim if axis < 0 else axis
    if axis == 0 or len(xs) == 1:
        return cp.concatenate(xs, axis=axis)
    shape = list(xs[0].shape)
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    ptrs, offsets, keep = [], [0], []
    for x in xs:  # one pass, few attribute reads: the Python side is per input
        width = x.shape[axis] * inner
        if width:
            if not x.flags.c_contiguous:
                x = cp.ascontiguousarray(x)
                keep.append(x)  # alive until the launch below is queued
            ptrs.append(x.data.ptr)
            offsets.append(offsets[-1] + width)
    shape[axis] = offsets[-1] // inner if inner else sum(int(x.shape[axis]) for x in xs)
    out = cp.empty(tuple(shape), dtype=xs[0].dtype)
    if out.size == 0:
        return out
    table = _table(ptrs + offsets)
    total = offsets[-1]
    blocks_x = (total + _THREADS - 1) // _THREADS
    # about 2^20 threads in all, each copying its column for outer / blocks_y rows
    blocks_y = max(1, min(outer, 65535, (1 << 20) // (blocks_x * _THREADS)))
    _concat_kernel(ctype)((blocks_x, blocks_y), (_THREADS,),
                          (table, np.int32(len(ptrs)), out, np.int64(outer), np.int64(total)))
    return out


# --------------------------------------------------------------------------------------
# sequence_pool: one launch for all sequences
# --------------------------------------------------------------------------------------
_SEQPOOL_SRC = r"""
extern "C" __global__ void opkit_sequence_pool_@T@(
        const @T@* __restrict__ x, const long long* __restrict__ off, @T@* __restrict__ out,
        int* __restrict__ max_index, long long seqs, long long dim, int mode, @T@ pad) {
    // one thread per (sequence, column): adds its sequence's rows in order (deterministic);
    // neighbouring threads read neighbouring columns (coalesced)
    const long long size = seqs * dim;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < size;
         idx += (long long)blockDim.x * gridDim.x) {
        const long long s = idx / dim, d = idx - s * dim;
        const long long b = off[s], e = off[s + 1];
        if (e <= b) {                       // an empty sequence: pad_value
            out[idx] = pad;
            if (max_index) max_index[idx] = -1;
            continue;
        }
        @T@ r;
        if (mode == 3) {                    // MAX (first maximum wins, as numpy's argmax)
            r = x[b * dim + d];
            long long arg = b;
            for (long long j = b + 1; j < e; ++j) {
                const @T@ v = x[j * dim + d];
                if (v > r) { r = v; arg = j; }
            }
            if (max_index) max_index[idx] = (int)arg;
        } else if (mode == 4) {             // LAST
            r = x[(e - 1) * dim + d];
        } else if (mode == 5) {             // FIRST
            r = x[b * dim + d];
        } else {                            // SUM, AVERAGE, SQRT: added in double
            double acc = 0;
            for (long long j = b; j < e; ++j) acc += (double)x[j * dim + d];
            if (mode == 0) acc = acc / (double)(e - b);
            else if (mode == 2) acc = acc / sqrt((double)(e - b));
            r = (@T@)acc;
        }
        out[idx] = r;
    }
}

// Few long sequences: a two-pass reduction, still deterministic. Pass 1: one thread per
// (chunk of <= CHUNK rows, column) reduces its chunk in order into a double partial (and
// the row of its maximum). Pass 2: one thread per (sequence, column) combines its chunks'
// partials in chunk order.
extern "C" __global__ void opkit_sequence_pool_partial_@T@(
        const @T@* __restrict__ x, const long long* __restrict__ rb,
        const long long* __restrict__ re, double* __restrict__ part,
        long long* __restrict__ part_idx, long long chunks, long long dim, int mode) {
    const long long size = chunks * dim;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < size;
         idx += (long long)blockDim.x * gridDim.x) {
        const long long c = idx / dim, d = idx - c * dim;
        const long long b = rb[c], e = re[c];
        if (mode == 3) {
            @T@ r = x[b * dim + d];
            long long arg = b;
            for (long long j = b + 1; j < e; ++j) {
                const @T@ v = x[j * dim + d];
                if (v > r) { r = v; arg = j; }
            }
            part[idx] = (double)r;
            part_idx[idx] = arg;
        } else {
            double acc = 0;
            for (long long j = b; j < e; ++j) acc += (double)x[j * dim + d];
            part[idx] = acc;
        }
    }
}

extern "C" __global__ void opkit_sequence_pool_combine_@T@(
        const double* __restrict__ part, const long long* __restrict__ part_idx,
        const long long* __restrict__ cs, const long long* __restrict__ off,
        @T@* __restrict__ out, int* __restrict__ max_index, long long seqs, long long dim,
        int mode, @T@ pad) {
    const long long size = seqs * dim;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < size;
         idx += (long long)blockDim.x * gridDim.x) {
        const long long s = idx / dim, d = idx - s * dim;
        const long long c0 = cs[s], c1 = cs[s + 1], len = off[s + 1] - off[s];
        if (c1 <= c0) {
            out[idx] = pad;
            if (max_index) max_index[idx] = -1;
            continue;
        }
        if (mode == 3) {
            double r = part[c0 * dim + d];
            long long arg = part_idx[c0 * dim + d];
            for (long long c = c0 + 1; c < c1; ++c)
                if (part[c * dim + d] > r) { r = part[c * dim + d]; arg = part_idx[c * dim + d]; }
            out[idx] = (@T@)r;
            if (max_index) max_index[idx] = (int)arg;
        } else {
            double acc = 0;
            for (long long c = c0; c < c1; ++c) acc += part[c * dim + d];
            if (mode == 0) acc = acc / (double)len;
            else if (mode == 2) acc = acc / sqrt((double)len);
            out[idx] = (@T@)acc;
        }
    }
}

// OPKIT_GPU_NONDETERMINISTIC=1: one thread per input element, atomics into the output
// (more parallel for a few long sequences; the order of the additions varies)
extern "C" __global__ void opkit_sequence_pool_atomic_@T@(
        const @T@* __restrict__ x, const long long* __restrict__ off, @T@* __restrict__ out,
        long long seqs, long long rows, long long dim) {
    const long long size = rows * dim;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < size;
         idx += (long long)blockDim.x * gridDim.x) {
        const long long row = idx / dim, d = idx - row * dim;
        long long lo = 0, hi = seqs;         // the sequence s with off[s] <= row < off[s+1]
        while (hi - lo > 1) {
            const long long mid = (lo + hi) >> 1;
            if (off[mid] <= row) lo = mid; else hi = mid;
        }
        atomicAdd(out + lo * dim + d, x[idx]);
    }
}

extern "C" __global__ void opkit_sequence_pool_finish_@T@(
        const long long* __restrict__ off, @T@* __restrict__ out, long long seqs,
        long long dim, int mode, @T@ pad) {
    const long long size = seqs * dim;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < size;
         idx += (long long)blockDim.x * gridDim.x) {
        const long long s = idx / dim;
        const long long len = off[s + 1] - off[s];
        if (len <= 0) out[idx] = pad;
        else if (mode == 0) out[idx] = out[idx] / (@T@)len;
        else if (mode == 2) out[idx] = out[idx] / sqrt((@T@)len);
    }
}
"""


@functools.lru_cache(maxsize=None)
def _seqpool_module(ctype: str):
    cp = _cp()
    return cp.RawModule(code=_SEQPOOL_SRC.replace("@T@", ctype))


_CHUNK = 256


def _sequence_pool_two_pass(module, ctype, x, off, lengths, out, index, mode, pad):
    """Few long sequences: chunks of _CHUNK rows reduced in parallel, then combined in
    order (deterministic)."""
    cp = _cp()
    seqs, dim = len(lengths), out.size // max(len(lengths), 1)
    nch = (lengths + _CHUNK - 1) // _CHUNK
    cs = np.concatenate([[0], np.cumsum(nch)]).astype(np.int64)
    chunks = int(cs[-1])
    seq_of = np.repeat(np.arange(seqs), nch)
    rb = off[seq_of] + (np.arange(chunks) - cs[seq_of]) * _CHUNK
    re = np.minimum(rb + _CHUNK, off[seq_of + 1])
    table = _table(np.concatenate([rb, re, cs, off]))
    t_rb, t_re = table[:chunks], table[chunks:2 * chunks]
    t_cs, t_off = table[2 * chunks:2 * chunks + seqs + 1], table[2 * chunks + seqs + 1:]
    part = cp.empty(chunks * dim, dtype=np.float64)
    part_idx = cp.empty(chunks * dim, dtype=np.int64) if mode == 3 else part
    if chunks:
        module.get_function(f"opkit_sequence_pool_partial_{ctype}")(
            (_grid(chunks * dim),), (_THREADS,),
            (x, t_rb, t_re, part, part_idx, np.int64(chunks), np.int64(dim), np.int32(mode)))
    module.get_function(f"opkit_sequence_pool_combine_{ctype}")(
        (_grid(seqs * dim),), (_THREADS,),
        (part, part_idx, t_cs, t_off, out, index if index is not None else np.intp(0),
         np.int64(seqs), np.int64(dim), np.int32(mode), pad))
    return out, index


def sequence_pool(x, offsets, pooltype: str = "AVERAGE", pad_value: float = 0.0,
                  with_index: bool = False):
    """Pool each sequence of `x` (rows offsets[s]:offsets[s+1], any trailing shape) into one
    row: Out [seqs, *x.shape[1:]], and for MAX (with_index) MaxIndex int32 of the same shape
    (the row of the maximum, -1 for an empty sequence). Empty sequences give pad_value.
    `offsets` is a host sequence (the LoD) or an int64 device array."""
    cp = _cp()
    ctype = _ctype(x.dtype)
    mode = POOL_TYPES.get(str(pooltype).upper())
    if mode is None:
        raise ValueError(f"pooltype {pooltype!r} is not one of {', '.join(POOL_TYPES)}")
    seqs = len(offsets) - 1
    feature = tuple(x.shape[1:])
    dim = int(np.prod(feature, dtype=np.int64))
    x = cp.ascontiguousarray(x)
    out = cp.empty((seqs,) + feature, dtype=x.dtype)
    index = cp.empty((seqs,) + feature, dtype=np.int32) if (with_index and mode == 3) else None
    if out.size == 0:
        return out, index
    off = offsets if isinstance(offsets, cp.ndarray) else _table(offsets)
    off = off.astype(np.int64, copy=False)
    module = _seqpool_module(ctype)
    scalar = np.float32 if ctype == "float" else np.float64
    rows = int(x.shape[0])
    if mode in (0, 1, 2, 3) and not isinstance(offsets, cp.ndarray) and \
            not (mode != 3 and nondeterministic_allowed()):
        host_off = np.asarray(offsets, dtype=np.int64)
        lengths = np.diff(host_off)
        if lengths.size and int(lengths.max()) > 4 * _CHUNK and seqs * dim < (1 << 17):
            return _sequence_pool_two_pass(module, ctype, x, host_off, lengths, out, index,
                                           mode, scalar(pad_value))
    if mode in (0, 1, 2) and nondeterministic_allowed() and rows * dim > 0:
        out.fill(0)
        module.get_function(f"opkit_sequence_pool_atomic_{ctype}")(
            (_grid(rows * dim),), (_THREADS,),
            (x, off, out, np.int64(seqs), np.int64(rows), np.int64(dim)))
        module.get_function(f"opkit_sequence_pool_finish_{ctype}")(
            (_grid(out.size),), (_THREADS,),
            (off, out, np.int64(seqs), np.int64(dim), np.int32(mode), scalar(pad_value)))
        return out, index
    module.get_function(f"opkit_sequence_pool_{ctype}")(
        (_grid(out.size),), (_THREADS,),
        (x, off, out, index if index is not None else np.intp(0), np.int64(seqs),
         np.int64(dim), np.int32(mode), scalar(pad_value)))
    return out, index
