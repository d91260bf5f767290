"""A case without a float input whose `dtype` attr selects a float kernel (fill_constant,
gaussian_random) runs in float32 and float64: the planner counts the attr, `prepare` sets it
(harness.backend.case.case_attrs) in the form the case gave it."""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.case import Case, attr_float_dtype, case_attrs


def creation(dtype, inputs=None):
    return Case("c", "fill_constant", inputs or {}, attrs={"shape": [2], "value": 1.0,
                                                            "dtype": dtype})


@pytest.mark.parametrize("given,want32", [("float64", "float32"), (6, 5),
                                          (np.dtype("float64"), np.dtype("float32")),
                                          (np.float64, np.float32)])
def test_the_attr_is_set_in_the_form_given(given, want32):
    case = creation(given)
    assert attr_float_dtype(case) == "float64"
    assert case_attrs(case, "float32")["dtype"] == want32
    assert case_attrs(case, "float64")["dtype"] is given
    assert case.attrs["dtype"] is given            # the case itself is unchanged


@pytest.mark.parametrize("case", [creation("int64"), creation(3), creation("bool"),
                                  creation("float64", {"X": np.ones(2)})],
                         ids=["int64", "VarType-INT64", "bool", "float-input"])
def test_an_integer_dtype_or_a_float_input_leaves_the_attrs_alone(case):
    assert attr_float_dtype(case) is None
    assert case_attrs(case, "float32") is case.attrs


def test_opkits_own_creation_op_runs_in_both_float_dtypes():
    from harness.backend.context import CheckContext, combos
    from harness.backend.seam import prepare

    case = Case("g", "gaussian_random", {}, attrs={"shape": [3, 4], "seed": 5,
                                                   "dtype": "float64"})
    runnable, _ = combos(case, CheckContext(places=("CPU",)), "output")
    assert sorted(c.dtype for c in runnable) == ["float32", "float64"]
    for combo in runnable:
        out = prepare(case, combo).forward()["Out"]
        assert out.dtype == np.dtype(combo.dtype)
