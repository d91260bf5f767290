"""The dedicated GPU op kernels (reference_ops.gpu) run as each op's GPU kernel give the
CPU kernel's results: checked even while an op file still holds the GPU slot, by swapping
the registration inside registry.scratch()."""
from __future__ import annotations

import numpy as np
import pytest

import opkit
import reference_ops.gpu as gpu
from opkit.framework.registry import _KERNELS
from opkit.registry import register_kernel, scratch

KERNELS = {"elementwise_add": gpu.elementwise_add_gpu_kernel,
           "softmax": gpu.softmax_gpu_kernel, "sum": gpu.sum_gpu_kernel,
           "concat": gpu.concat_gpu_kernel, "sequence_pool": gpu.sequence_pool_gpu_kernel}


def _use_dedicated(op):
    table = _KERNELS.get(op, {})
    for key in [k for k, e in table.items() if e.place == "GPU"]:
        del table[key]
    register_kernel(op, place="GPU", dtypes=("float32", "float64"))(KERNELS[op])


def _run(place, build, feed, lod_fetch=False):
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        fetch = build()
    fetch = fetch if isinstance(fetch, (list, tuple)) else [fetch]
    return opkit.Executor(place).run(main, feed=feed, fetch_list=list(fetch),
                                     return_numpy=not lod_fetch)


def _both(op, build, feed, lod_fetch=False):
    cpu = _run(opkit.CPUPlace(), build, feed, lod_fetch)
    with scratch():
        _use_dedicated(op)
        entries = [e for e in opkit.registry.op_info(op).kernels.values() if e.place == "GPU"]
        assert all("reference_ops/gpu/" in e.name.replace("\\", "/") for e in entries)
        dev = _run(opkit.CUDAPlace(0), build, feed, lod_fetch)
    return cpu, dev


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_elementwise_add(dtype):
    rng = np.random.default_rng(0)
    feed = {"x": rng.standard_normal((2, 3, 4, 5)).astype(dtype),
            "y": rng.standard_normal((3, 4)).astype(dtype)}

    def build():
        x = opkit.layers.data("x", shape=[3, 4, 5], dtype=dtype)
        y = opkit.layers.data("y", shape=[3, 4], dtype=dtype, append_batch_size=False)
        return opkit.layers.elementwise_add(x, y, axis=1)

    cpu, dev = _both("elementwise_add", build, feed)
    np.testing.assert_array_equal(dev[0], cpu[0])


@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax(axis):
    feed = {"x": np.random.default_rng(1).standard_normal((4, 6, 7)).astype("float64")}

    def build():
        return opkit.layers.softmax(opkit.layers.data("x", shape=[6, 7], dtype="float64"),
                                    axis=axis)

    cpu, dev = _both("softmax", build, feed)
    np.testing.assert_allclose(dev[0], cpu[0], rtol=1e-12, atol=1e-14)


def test_sum_same_bits():
    rng = np.random.default_rng(2)
    feed = {f"x{i}": rng.standard_normal((5, 7)).astype("float32") for i in range(5)}

    def build():
        xs = [opkit.layers.data(f"x{i}", shape=[7], dtype="float32") for i in range(5)]
        return opkit.layers.sums(xs)

    cpu, dev = _both("sum", build, feed)
    np.testing.assert_array_equal(dev[0], cpu[0])


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_concat(axis):
    rng = np.random.default_rng(3)
    shapes = {0: [(2, 3, 4), (5, 3, 4)], 1: [(2, 3, 4), (2, 1, 4), (2, 6, 4)],
              2: [(2, 3, 4), (2, 3, 2)]}[axis]
    feed = {f"x{i}": rng.standard_normal(s).astype("float32") for i, s in enumerate(shapes)}

    def build():
        xs = [opkit.layers.data(f"x{i}", shape=list(s), dtype="float32",
                                append_batch_size=False) for i, s in enumerate(shapes)]
        return opkit.layers.concat(xs, axis=axis)

    cpu, dev = _both("concat", build, feed)
    np.testing.assert_array_equal(dev[0], cpu[0])


@pytest.mark.parametrize("pooltype", ["AVERAGE", "SUM", "SQRT", "MAX", "LAST", "FIRST"])
def test_sequence_pool(pooltype):
    if not opkit.registry.has_op("sequence_pool"):
        pytest.skip("sequence_pool is not registered")
    lengths = [[2, 0, 3, 1, 0]]
    x = np.random.default_rng(4).standard_normal((6, 3)).astype("float64")

    def build():
        xv = opkit.layers.data("x", shape=[3], dtype="float64", lod_level=1)
        out, index = opkit.layers.append_op(
            "sequence_pool", {"X": xv}, out_slots=("Out", "MaxIndex"),
            attrs={"pooltype": pooltype, "pad_value": -1.5}, lod_level=0)
        return [out, index] if pooltype == "MAX" else [out]

    cpu, dev = _both("sequence_pool", build, {"x": (x, lengths)}, lod_fetch=True)
    for a, b in zip(cpu, dev):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12, atol=1e-14)
        assert b.lod == a.lod
