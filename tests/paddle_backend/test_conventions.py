"""The triage's opkit-side fixes (each a false alarm the overlap run raised on Paddle's
kernels), with the case that raised it."""
from __future__ import annotations

import numpy as np

from harness.backend.case import VarSpec


def op(op_type, inputs, attrs=None, outputs=None):
    from harness.backend.seam import make as make_op

    specs = {slot: [VarSpec(n, a, lengths) for n, a, lengths in items]
             for slot, items in inputs.items()}
    return make_op(op_type, specs, attrs or {}, outputs, backend="paddle")


def test_a_0d_result_is_handed_out_in_fluids_shape_1(paddle_backend):
    """mean: Paddle >= 2.5 gives 0-D, Fluid 1.8 (opkit's OpTests) [1]."""
    p = op("mean", {"X": [("x", np.arange(6.0).reshape(2, 3), None)]},
           outputs={"Out": ["out"]})
    out = p.forward()["out"]
    assert out.shape == (1,) and out[0] == 2.5


def test_batch_norm_running_stats_named_apart_are_written_in_place(paddle_backend):
    rng = np.random.default_rng(0)
    ins = {"X": [("x", rng.normal(size=(2, 3, 4, 4)), None)],
           "Scale": [("scale", np.ones(3), None)], "Bias": [("bias", np.zeros(3), None)],
           "Mean": [("mean", np.zeros(3), None)], "Variance": [("var", np.ones(3), None)]}
    outs = {"Y": ["y"], "MeanOut": ["mean_out"], "VarianceOut": ["var_out"],
            "SavedMean": ["saved_mean"], "SavedVariance": ["saved_var"]}
    p = op("batch_norm", ins, {"is_test": False, "momentum": 0.9, "epsilon": 1e-5}, outs)
    got = p.forward()
    x = ins["X"][0][1]
    np.testing.assert_allclose(got["mean_out"], 0.1 * x.mean(axis=(0, 2, 3)), rtol=1e-5)
    assert p.aliases == {"mean_out": "mean", "var_out": "var"}


def test_extra_attrs_reach_the_kernel(paddle_backend):
    """dropout's seed and fix_seed are 'extra' attrs in Paddle 3: without them the mask was
    drawn anew on every run."""
    x = np.ones((8, 8))
    attrs = {"dropout_prob": 0.5, "fix_seed": True, "seed": 3}
    a = op("dropout", {"X": [("x", x, None)]}, attrs, {"Out": ["out"], "Mask": ["mask"]})
    b = op("dropout", {"X": [("x", x, None)]}, attrs, {"Out": ["out"], "Mask": ["mask"]})
    first = a.forward()["out"].copy()
    assert np.array_equal(first, a.forward()["out"])
    assert np.array_equal(first, b.forward()["out"])
    assert "seed" not in a.dropped_attrs


def test_a_dtype_attr_given_by_name(paddle_backend):
    p = op("fill_constant", {}, {"shape": [2, 3], "value": 1.5, "dtype": "float64"},
           {"Out": ["out"]})
    out = p.forward()["out"]
    assert out.dtype == np.float64 and out.shape == (2, 3) and (out == 1.5).all()


def test_a_bfloat16_dtype_attr_gives_a_bfloat16_array(paddle_backend):
    from opkit.framework import dtypes

    p = op("fill_constant", {}, {"shape": [2, 3], "value": 3.8, "dtype": "bfloat16"},
           {"Out": ["out"]})
    out = p.forward()["out"]
    assert out.dtype == dtypes.bfloat16, out.dtype          # not Paddle's uint16 bits
    assert (out.astype(np.float64) == float(np.asarray(3.8, dtypes.bfloat16))).all()


def test_an_unknown_dtype_name_is_refused_naming_the_attr(paddle_backend):
    from harness.backend.seam import op_refused

    try:
        op("fill_constant", {}, {"shape": [2], "value": 1.0, "dtype": "float65"},
           {"Out": ["out"]}).forward()
    except Exception as exc:  # noqa: BLE001
        assert op_refused(exc), exc
        assert "dtype" in str(exc) and "float65" in str(exc)
    else:
        raise AssertionError("an unknown dtype name ran")


def test_xshape_takes_its_compile_time_shape(paddle_backend):
    p = op("reshape2", {"X": [("x", np.ones((2, 3, 4)), None)]}, {"shape": [6, 4]},
           {"Out": ["out"], "XShape": ["xshape"]})
    got = p.forward()
    assert got["out"].shape == (6, 4) and got["xshape"].shape == (0, 2, 3, 4)


def test_an_empty_lod_level_is_refused_not_a_raw_error(paddle_backend):
    from harness.backend.seam import op_refused

    try:
        op("fill_any_like", {"X": [("x", np.zeros((0, 3)), [[]])]}, {"value": 1.0},
           {"Out": ["out"]}).forward()
    except Exception as exc:  # noqa: BLE001
        assert op_refused(exc), exc


def test_a_case_feeding_a_0d_input_gets_paddles_0d_result(paddle_backend):
    """The 0-D -> [1] bridge is for cases written to Fluid 1.8's conventions only: a case
    that feeds a 0-D input (explore's 0-D variant, a Paddle 2.x / 3.x test) knows 0-D
    tensors, and its reference says 0-D, as Paddle's kernel gives."""
    for op_type, attrs in (("mean", None), ("reduce_sum", {"dim": [0], "reduce_all": True})):
        p = op(op_type, {"X": [("x", np.array(2.5), None)]}, attrs, outputs={"Out": ["out"]})
        out = p.forward()["out"]
        assert out.shape == () and float(out) == 2.5, (op_type, out.shape)
    # the Fluid-style case keeps its [1] (test_a_0d_result_is_handed_out_in_fluids_shape_1)
    p = op("mean", {"X": [("x", np.arange(6.0).reshape(2, 3), None)]},
           outputs={"Out": ["out"]})
    assert p.forward()["out"].shape == (1,)


def test_the_oracle_gets_a_float_attr_as_paddle_stores_it(paddle_backend):
    """Paddle's `scale` and `bias` are FLOAT attrs (32 bits): the kernel computes with
    float32(0.1), so the case's reference is given that value, not the 64-bit 0.1 the case
    wrote; an attr of another type is given as written."""
    from harness.backend.case import case_from_test

    seen = []

    class TestScale:
        op_type = "scale"
        inputs = {"X": np.ones(3)}
        attrs = {"scale": 0.1, "bias": 0.3, "bias_after_scale": True}
        outputs = {"Out": np.ones(3)}

        def reference(self, inputs, attrs):
            seen.append(dict(attrs))
            return {"Out": inputs["X"] * attrs["scale"] + attrs["bias"]}

    case = case_from_test(TestScale())
    case.reference(case.inputs, dict(case.attrs, scale=0.1))
    assert seen[-1]["scale"] == float(np.float32(0.1)) != 0.1
    assert seen[-1]["bias"] == float(np.float32(0.3))
    assert seen[-1]["bias_after_scale"] is True


def test_on_opkits_kernels_the_oracle_gets_the_attrs_as_written():
    from harness.backend.case import case_from_test
    from harness.options import Options, using

    seen = []

    class TestScale:
        op_type = "scale"
        inputs = {"X": np.ones(3)}
        attrs = {"scale": 0.1}
        outputs = {"Out": np.ones(3)}

        def reference(self, inputs, attrs):
            seen.append(dict(attrs))
            return {"Out": inputs["X"] * attrs["scale"]}

    with using(Options(backend="opkit")):
        case = case_from_test(TestScale())
        case.reference(case.inputs, dict(case.attrs))
    assert seen[-1]["scale"] == 0.1
