"""The dedicated cupy kernels (reference_ops.gpu.kernels) against numpy, bit for bit where
the order of the additions is the CPU's, and repeated runs give the same bits."""
from __future__ import annotations

import numpy as np
import pytest

from reference_ops.gpu import kernels

DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}


def _rand(shape, dtype, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def _np_add(x, y, axis):
    from reference_ops._common import elementwise_y_view_shape

    if x.shape == y.shape:
        return x + y
    return x + y.reshape(elementwise_y_view_shape(x.shape, y.shape, axis))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,ys,axis", [
    ((4, 5), (4, 5), -1),
    ((2, 3, 4, 5), (3, 4), 1),
    ((2, 3, 4, 5), (4, 5), -1),
    ((2, 3, 4, 5), (2, 3), 0),
    ((2, 3, 4, 5), (3, 1), 1),      # trailing 1 trimmed
    ((2, 3, 4, 5), (1,), -1),       # scalar-like
    ((2, 3, 4, 5), (3, 1, 5), 1),   # a broadcasting 1 inside the run: general path
    ((0, 3), (3,), -1),
])
def test_elementwise_add_broadcast(cp, dtype, xs, ys, axis):
    x, y = _rand(xs, dtype, 1), _rand(ys, dtype, 2)
    got = kernels.elementwise_add(cp.asarray(x), cp.asarray(y), axis)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(cp.asnumpy(got), _np_add(x, y, axis))  # one add: exact


def test_elementwise_add_reads_strided_x(cp):
    x = _rand((6, 8), "float32")
    xt = cp.asarray(x).T          # not contiguous
    y = _rand((6,), "float32")
    np.testing.assert_array_equal(cp.asnumpy(kernels.elementwise_add(xt, cp.asarray(y), -1)),
                                  x.T + y)


def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", [((3, 7), -1), ((5, 1000), 1), ((4, 3, 6), 1),
                                        ((2, 5, 3, 4), 0), ((8, 1), -1), ((1, 70000), -1),
                                        ((0, 4), -1)])
def test_softmax(cp, dtype, shape, axis):
    x = _rand(shape, dtype, 3) * 5
    got = kernels.softmax(cp.asarray(x), axis)
    np.testing.assert_allclose(cp.asnumpy(got), _np_softmax(x, axis), **TOL[dtype])


def test_softmax_is_stable_for_large_inputs(cp):
    x = np.array([[1000.0, 1000.0, -1000.0]], "float32")
    np.testing.assert_allclose(cp.asnumpy(kernels.softmax(cp.asarray(x), -1)),
                               [[0.5, 0.5, 0.0]], atol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [1, 2, 7, 40])
def test_sum_n_same_bits_as_the_cpu_loop(cp, dtype, k):
    xs = [_rand((33, 65), dtype, i) for i in range(k)]
    want = xs[0].copy()
    for x in xs[1:]:
        want += x
    got = kernels.sum_n([cp.asarray(x) for x in xs])
    np.testing.assert_array_equal(cp.asnumpy(got), want)


def test_sum_n_strided_and_empty(cp):
    a = _rand((4, 6), "float64")
    got = kernels.sum_n([cp.asarray(a).T, cp.asarray(a).T])
    np.testing.assert_array_equal(cp.asnumpy(got), a.T + a.T)
    assert kernels.sum_n([cp.zeros((0, 3)), cp.zeros((0, 3))]).shape == (0, 3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,axis", [
    ([(2, 3), (2, 5), (2, 1)], 1),
    ([(2, 3, 4), (2, 0, 4), (2, 2, 4)], 1),
    ([(3, 2, 4), (3, 2, 1), (3, 2, 7)], -1),
    ([(2, 3), (4, 3)], 0),
    ([(5, 2)] * 64, 1),
])
def test_concat(cp, dtype, shapes, axis):
    xs = [_rand(s, dtype, i) for i, s in enumerate(shapes)]
    got = kernels.concat([cp.asarray(x) for x in xs], axis)
    np.testing.assert_array_equal(cp.asnumpy(got), np.concatenate(xs, axis=axis))


def test_concat_strided_inputs(cp):
    a, b = _rand((4, 3), "float32"), _rand((5, 3), "float32")
    got = kernels.concat([cp.asarray(a).T, cp.asarray(b).T], 1)
    np.testing.assert_array_equal(cp.asnumpy(got), np.concatenate([a.T, b.T], axis=1))


def _np_seqpool(x, offsets, pooltype, pad):
    out, idx = [], []
    for b, e in zip(offsets[:-1], offsets[1:]):
        seq = x[b:e]
        if e == b:
            out.append(np.full(x.shape[1:], pad, x.dtype))
            idx.append(np.full(x.shape[1:], -1, np.int32))
            continue
        if pooltype == "SUM":
            r = seq.sum(axis=0)
        elif pooltype == "AVERAGE":
            r = seq.sum(axis=0) / (e - b)
        elif pooltype == "SQRT":
            r = seq.sum(axis=0) / np.sqrt(e - b)
        elif pooltype == "MAX":
            r = seq.max(axis=0)
            idx.append((seq.argmax(axis=0) + b).astype(np.int32))
        elif pooltype == "LAST":
            r = seq[-1]
        else:
            r = seq[0]
        out.append(np.asarray(r, x.dtype))
    return np.stack(out).astype(x.dtype), np.stack(idx) if idx else None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pooltype", list(kernels.POOL_TYPES))
@pytest.mark.parametrize("lengths,feature", [([0, 3, 0, 2, 0], (4,)), ([5], (2, 3)),
                                             ([0, 0], (3,)), ([1, 300, 2], (17,))])
def test_sequence_pool(cp, dtype, pooltype, lengths, feature):
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(int).tolist()
    x = _rand((offsets[-1],) + feature, dtype, 5)
    out, index = kernels.sequence_pool(cp.asarray(x), offsets, pooltype, pad_value=-7.0,
                                       with_index=True)
    want, want_index = _np_seqpool(x, offsets, pooltype, -7.0)
    np.testing.assert_allclose(cp.asnumpy(out), want, **TOL[dtype])
    if pooltype == "MAX":
        np.testing.assert_array_equal(cp.asnumpy(index), want_index)
    else:
        assert index is None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pooltype", list(kernels.POOL_TYPES))
def test_sequence_pool_long_sequences_two_pass(cp, dtype, pooltype):
    lengths = [0, 5000, 3, 0, 2000, 1025]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(int).tolist()
    x = _rand((offsets[-1], 5), dtype, 9)
    runs = [kernels.sequence_pool(cp.asarray(x), offsets, pooltype, pad_value=2.0,
                                  with_index=True) for _ in range(2)]
    want, want_index = _np_seqpool(x.astype(np.float64), offsets, pooltype, 2.0)
    np.testing.assert_allclose(cp.asnumpy(runs[0][0]), want.astype(dtype),
                               rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-4)
    assert cp.asnumpy(runs[0][0]).tobytes() == cp.asnumpy(runs[1][0]).tobytes()
    if pooltype == "MAX":
        np.testing.assert_array_equal(cp.asnumpy(runs[0][1]), want_index)


@pytest.mark.parametrize("pooltype", ["SUM", "AVERAGE", "SQRT"])
def test_sequence_pool_nondeterministic_variant_is_close(cp, monkeypatch, pooltype):
    lengths = [0, 5000, 3, 0, 20000]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(int).tolist()
    x = _rand((offsets[-1], 8), "float64", 6)
    det, _ = kernels.sequence_pool(cp.asarray(x), offsets, pooltype, pad_value=1.5)
    monkeypatch.setenv(kernels.NONDETERMINISTIC_ENV, "1")
    fast, _ = kernels.sequence_pool(cp.asarray(x), offsets, pooltype, pad_value=1.5)
    np.testing.assert_allclose(cp.asnumpy(fast), cp.asnumpy(det), rtol=1e-10, atol=1e-10)


def test_every_dedicated_kernel_is_bitwise_deterministic(cp):
    x = cp.asarray(_rand((64, 4097), "float32", 7))
    y = cp.asarray(_rand((4097,), "float32", 8))
    offsets = list(range(0, 65, 8))
    runs = []
    for _ in range(3):
        runs.append([cp.asnumpy(a) for a in (
            kernels.softmax(x, -1), kernels.elementwise_add(x, y, -1),
            kernels.sum_n([x, x, x]), kernels.concat([x, x], 1),
            kernels.sequence_pool(x, offsets, "SUM")[0])])
    for later in runs[1:]:
        for a, b in zip(runs[0], later):
            assert a.tobytes() == b.tobytes()


def test_kernels_refuse_other_dtypes(cp):
    with pytest.raises(TypeError, match="float32 or float64"):
        kernels.softmax(cp.zeros((2, 2), cp.int32))
