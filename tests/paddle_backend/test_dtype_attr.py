"""A creation op's `dtype` attr selects its float kernel (no float input): its checks run in
float32 and float64 on Paddle's kernels too."""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.case import Case, VarSpec


@pytest.mark.parametrize("op_type,attrs", [
    ("gaussian_random", {"shape": [4, 5], "mean": 1.0, "std": 2.0, "seed": 7,
                         "dtype": "float64"}),
    ("uniform_random", {"shape": [4, 5], "min": -2.0, "max": 3.0, "seed": 7, "dtype": 6}),
    ("fill_constant", {"shape": [2, 3], "value": 1.5, "dtype": np.dtype("float32")}),
])
def test_each_float_dtype_runs_its_own_kernel(paddle_backend, op_type, attrs):
    from harness.backend.context import CheckContext, combos
    from harness.backend.seam import prepare

    case = Case(op_type, op_type, {}, attrs=attrs, outputs={"Out": np.zeros(attrs["shape"])})
    runnable, _ = combos(case, CheckContext(), "output")
    assert sorted(c.dtype for c in runnable) == ["float32", "float64"]
    for combo in runnable:
        out = prepare(case, combo).forward()["Out"]
        assert out.dtype == np.dtype(combo.dtype) and out.shape == tuple(attrs["shape"])


def test_an_integer_dtype_attr_runs_as_given(paddle_backend):
    from harness.backend.context import CheckContext, combos

    case = Case("fc", "fill_constant", {}, attrs={"shape": [3], "value": 2, "dtype": "int64"})
    runnable, _ = combos(case, CheckContext(), "output")
    assert [c.dtype for c in runnable] == [""]


def test_an_unknown_dtype_name_is_refused_naming_the_attr(paddle_backend):
    from harness.backend.seam import make, refusal

    with pytest.raises(Exception) as info:
        make("fill_constant", {}, {"shape": [2], "value": 1.0, "dtype": "no-such-dtype"},
             {"Out": ["out"]}, backend="paddle")
    assert refusal(info.value) and "dtype" in str(info.value)


def test_a_bfloat16_result_is_handed_out_as_bfloat16(paddle_backend):
    import ml_dtypes

    from harness.backend.seam import make

    p = make("fill_constant", {}, {"shape": [2, 2], "value": 1.5, "dtype": "bfloat16"},
             {"Out": ["out"]}, backend="paddle")
    out = p.forward()["out"]
    assert out.dtype == ml_dtypes.bfloat16 and float(out[0, 0]) == 1.5


def test_paddles_ops_record_no_python_call_stack(paddle_backend):
    """Paddle's Operator records traceback.extract_stack() into every op it creates; the
    backend turns that off (opkit_paddle.backend.callstack): it was most of its time."""
    from harness.backend.seam import make

    p = make("relu", {"X": [VarSpec("x", np.ones(3))]}, {}, {"Out": ["out"]},
             backend="paddle")
    assert list(p.fwd_op.desc.attr("op_callstack")) == []
    import traceback

    assert traceback.extract_stack()          # the traceback module itself is unchanged


def test_the_dtypes_check_counts_a_float_dtype_attr(paddle_backend):
    import opkit_paddle.backend.checks  # noqa: F401 - the backend's replacement checks
    from harness.backend.context import CheckContext
    from harness.checks.catalog import get_check

    rand = Case("g", "gaussian_random", {}, attrs={"shape": [3], "seed": 1,
                                                   "dtype": "float32"})
    (got,) = get_check("dtypes")(rand, CheckContext())
    assert got.status == "pass" and "float32 and float64" in got.message
    ints = Case("f", "fill_constant", {}, attrs={"shape": [3], "value": 1, "dtype": "int64"})
    (got,) = get_check("dtypes")(ints, CheckContext())
    assert got.status == "skip" and "no float dtype attr" in got.message
