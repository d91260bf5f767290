"""Dedicated cupy kernels, as plain functions on cupy arrays.

Everything here is built on first use: importing this module needs neither cupy nor a GPU.
The functions run on cupy's *current* stream (inside a kernel: the op's device context
stream, which `OperatorWithKernel.run_impl` enters), never synchronize, and never read a
value back to the host.

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
    # Y[(i / post) % n] -- Paddle's pre x n x post decomposition, one launch.
    return cp.ElementwiseKernel("T x, raw T y, int64 n, int64 post", "T z",
                                "z = x + y[(i / post) % n]", "opkit_elementwise_add_bcast")


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
    return _add_bcast_kernel()(x, cp.ascontiguousarray(y), np.int64(n), np.int64(max(post, 1)),
                               out)


# --------------------------------------------------------------------------------------
# softmax: one block per row (the row is the `axis` dimension, with stride `post`)
# --------------------------------------------------------------------------------------
_SOFTMAX_SRC = r"""
extern "C" __global__ void opkit_softmax_@T@(const @T@* __restrict__ x, @T@* __restrict__ out,
                                             long long n, long long post, long long rows) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    @T@* sm = reinterpret_cast<@T@*>(smem_raw);
    const int tid = threadIdx.x;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const long long p = r / post, q = r % post;
        const @T@* xr = x + p * n * post + q;
        @T@* orow = out + p * n * post + q;
        @T@ m = xr[0];                          // n >= 1
        for (long long k = tid; k < n; k += blockDim.x) {
            @T@ v = xr[k * post];
            if (v > m || v != v) m = v;           // NaN propagates, as numpy's max
        }
        sm[tid] = m;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {   // fixed tree: deterministic
            if (tid < s) {
                @T@ a = sm[tid], b = sm[tid + s];
                sm[tid] = (b > a || b != b) ? b : a;
            }
            __syncthreads();
        }
        m = sm[0];
        __syncthreads();
        @T@ acc = 0;
        for (long long k = tid; k < n; k += blockDim.x) acc += exp(xr[k * post] - m);
        sm[tid] = acc;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) sm[tid] += sm[tid + s];
            __syncthreads();
        }
        const @T@ total = sm[0];
        __syncthreads();
        for (long long k = tid; k < n; k += blockDim.x)
            orow[k * post] = exp(xr[k * post] - m) / total;
    }
}
"""


@functools.lru_cache(maxsize=None)
def _softmax_kernel(ctype: str):
    cp = _cp()
    return cp.RawKernel(_SOFTMAX_SRC.replace("@T@", ctype), f"opkit_softmax_{ctype}")


def softmax(x, axis: int = -1):
    """softmax of `x` along `axis`: one block per row, a fixed reduction tree."""
    cp = _cp()
    ctype = _ctype(x.dtype)
    axis = axis + x.ndim if axis < 0 else axis
    x = cp.ascontiguousarray(x)
    out = cp.empty_like(x)
    if x.size == 0:
        return cp.zeros_like(x)
    n = int(x.shape[axis])
    post = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    rows = x.size // n
    threads = 32
    while threads < n and threads < _THREADS:
        threads *= 2
    grid = max(1, min(rows, 1 << 20))
    _softmax_kernel(ctype)((grid,), (threads,),
                           (x, out, np.int64(n), np.int64(post), np.int64(rows)),
                           shared_mem=threads * x.dtype.itemsize)
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
    xs = [cp.ascontiguousarray(x) for x in xs]
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
    // table[0:k] input pointers, table[k:2k+1] column offsets of the inputs in a row of out
    const long long* col_off = table + k;
    const long long size = outer * total_cols;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < size;
         idx += (long long)blockDim.x * gridDim.x) {
        const long long o = idx / total_cols, c = idx - o * total_cols;
        int lo = 0, hi = k;                   // largest j with col_off[j] <= c
        while (hi - lo > 1) {
            const int mid = (lo + hi) >> 1;
            if (col_off[mid] <= c) lo = mid; else hi = mid;
        }
        const long long w = col_off[lo + 1] - col_off[lo];
        out[idx] = reinterpret_cast<const @T@*>(table[lo])[o * w + (c - col_off[lo])];
    }
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
    xs = [cp.ascontiguousarray(x) for x in xs]
    shape = list(xs[0].shape)
    shape[axis] = sum(int(x.shape[axis]) for x in xs)
    out = cp.empty(tuple(shape), dtype=xs[0].dtype)
    if out.size == 0:
        return out
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    live = [x for x in xs if x.size]
    offsets = [0]
    for x in live:
        offsets.append(offsets[-1] + int(x.shape[axis]) * inner)
    table = _table([x.data.ptr for x in live] + offsets)
    _concat_kernel(ctype)((_grid(out.size),), (_THREADS,),
                          (table, np.int32(len(live)), out, np.int64(outer),
                           np.int64(offsets[-1])))
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
        } else {                            // SUM, AVERAGE, SQRT
            r = 0;
            for (long long j = b; j < e; ++j) r = r + x[j * dim + d];
            if (mode == 0) r = r / (@T@)(e - b);
            else if (mode == 2) r = r / sqrt((@T@)(e - b));
        }
        out[idx] = r;
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
