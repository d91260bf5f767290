"""float16 and bfloat16 end to end: dtype names, registry, Program/VarDesc (and its JSON),
feeds and fetches, LoDTensor, and kernels that compute in float32
(opkit.framework.low_precision)."""
import numpy as np
import pytest

import opkit
from opkit.framework.dtypes import (bfloat16, finfo, is_float, is_low_precision,
                                    low_precision_of, max_finite)
from opkit.framework.kernel_type import dtype_name
from opkit.framework.low_precision import compute_in_float32
from opkit.framework.tensor import LoDTensor
from opkit.registry import kernels_of, op_info, register_kernel, scratch


def test_dtype_names_and_facts():
    assert dtype_name("bfloat16") == "bfloat16" and dtype_name(np.float16) == "float16"
    assert np.dtype("bfloat16") == bfloat16
    assert is_float(bfloat16) and is_float("float16") and not is_float("int32")
    assert is_low_precision("bfloat16") and not is_low_precision("float32")
    assert max_finite("float16") == 65504.0
    assert finfo("bfloat16").eps == 2.0 ** -7 and finfo("float16").eps == 2.0 ** -10


def test_low_precision_of_needs_one_low_dtype():
    x16 = np.ones(3, np.float16)
    assert low_precision_of({"X": x16, "I": np.arange(3)}) == "float16"
    assert low_precision_of({"X": [("a", x16.astype(bfloat16))]}) == "bfloat16"
    assert low_precision_of({"X": x16, "Y": np.ones(3)}) is None
    assert low_precision_of({"X": np.ones(3, np.float32)}) is None


def test_register_kernel_takes_both_low_precision_dtypes():
    with scratch():
        opkit.register_operator("fixture_low_only", opkit.OperatorWithKernel)

        @register_kernel("fixture_low_only", place=("CPU", "GPU"), dtypes=("bfloat16", "float16"))
        def k(ctx):
            pass
        assert op_info("fixture_low_only").kernel_places() == {
            "CPU": ["bfloat16", "float16"], "GPU": ["bfloat16", "float16"]}
        assert ("bfloat16", "CPU", "ANY", "PLAIN") in kernels_of("fixture_low_only")
    # the built-in relu has both (reference_ops._low_precision)
    assert {"float16", "bfloat16"} <= set(op_info("relu").kernel_places()["CPU"])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_program_feed_fetch_and_json_keep_the_dtype(dtype):
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[4], dtype=dtype, lod_level=1)
        out = opkit.layers.softmax(x)
    assert x.dtype == dtype and out.dtype == dtype
    again = opkit.Program.from_json(main.to_json())
    assert again.global_block().var(x.name).dtype == dtype
    data = np.random.default_rng(0).uniform(-2, 2, (3, 4)).astype(dtype)
    exe = opkit.Executor(opkit.CPUPlace())
    (got,) = exe.run(main, feed={"x": (data, [[1, 2]])}, fetch_list=[out], scope=opkit.Scope())
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype)
    x64 = data.astype(np.float64)
    want = np.exp(x64 - x64.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    # computed in float32, rounded once: the float64 result rounded to the dtype, or the
    # neighbour when the two straddle a rounding boundary
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2 * finfo(dtype).eps)


def test_a_feed_of_another_dtype_is_refused_by_name():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[2], dtype="bfloat16")
        out = opkit.layers.relu(x)
    exe = opkit.Executor(opkit.CPUPlace())
    with pytest.raises(opkit.EnforceNotMet, match="bfloat16"):
        exe.run(main, feed={"x": np.ones((1, 2), np.float32)}, fetch_list=[out],
                scope=opkit.Scope())


def test_lod_tensor_holds_bfloat16_with_lod():
    t = LoDTensor()
    t.set(np.arange(6, dtype=np.float32).reshape(3, 2).astype(bfloat16))
    t.set_recursive_sequence_lengths([[1, 2]])
    assert t.dtype == bfloat16 and t.shape == (3, 2)
    assert t.recursive_sequence_lengths() == [[1, 2]]


def test_compute_in_float32_rounds_to_nearest_even_once():
    """The wrapped float32 kernel sees float32 inputs; the output is rounded once."""
    seen = {}

    def times_third(ctx):
        x = ctx.input("X")
        seen["dtype"] = x.dtype
        ctx.set_output("Out", x / np.float32(3))

    with scratch():
        opkit.register_operator("fixture_third", opkit.OperatorWithKernel)
        register_kernel("fixture_third", dtypes=("float16", "bfloat16"))(
            compute_in_float32(times_third))
        from harness.backend.seam import make
        from harness.backend.case import VarSpec

        x = np.random.default_rng(1).uniform(1, 2, 64)
        for dtype in ("float16", "bfloat16"):
            xs = x.astype(dtype)
            out = make("fixture_third", {"X": [VarSpec("X", xs)]}, {},
                             {"Out": ["Out"]}).forward()["Out"]
            assert seen["dtype"] == np.float32 and out.dtype == np.dtype(dtype)
            want = (xs.astype(np.float32) / np.float32(3)).astype(dtype)
            assert np.array_equal(out.view(np.uint16), want.view(np.uint16))
