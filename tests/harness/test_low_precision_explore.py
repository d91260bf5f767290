"""float16 / bfloat16 in `explore` and the variants (issue 38): the values explore derives
for a low-precision case are at that dtype's range (float16's 65504, its smallest normal and
subnormal), a float16 op that overflows only near float16's top of range is caught while its
twin passes, and a bfloat16 case (numpy kind 'V') gets the layout / empty / extremal / kinks
variants (tests/broken_ops/low_precision_breakers_op.py: broken_lp_halve, good_lp_halve)."""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.case import Case, Derived, normalize_slots
from harness.options import override
from harness.executing.pool import run_case
from opkit.framework.dtypes import bfloat16, finfo


def _halve_ref(inputs, attrs):
    x = inputs["X"]
    return {"Out": (x / 2).astype(x.dtype)}


def _case(op_type, dtype, shape=(3, 4), seed=3):
    x = np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)
    return Case(f"Test_{op_type}_{np.dtype(dtype).name}", op_type, {"X": x}, {},
                {"Out": (x / 2).astype(x.dtype)}, grad_inputs=["X"], grad_outputs=["Out"],
                reference=_halve_ref)


@pytest.fixture(autouse=True)
def cpu_only():
    with override(place="CPU", dtype="all"):
        yield


def _explored_values(case):
    from harness.checks.declarations.explore import derive_cases

    out = []
    for ex in derive_cases(case, seed=1):
        if ex.kind == "value":
            x = normalize_slots(ex.inputs)["X"][0].data
            assert x.dtype == case.inputs["X"].dtype, ex.note
            out.append(x.astype(np.float64))
    return out


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_explore_derives_the_low_precision_dtypes_own_extremes(broken_ops, dtype):
    fi = finfo(dtype)
    vals = np.concatenate([v.reshape(-1) for v in _explored_values(_case("good_lp_halve",
                                                                          dtype))])
    finite = vals[np.isfinite(vals)]
    assert float(fi.max) in finite and -float(fi.max) in finite
    assert float(fi.smallest_normal) in finite and float(fi.smallest_subnormal) in finite
    assert np.abs(finite).max() == float(fi.max)        # nothing past the dtype's range
    assert np.isnan(vals).any() and np.isposinf(vals).any() and np.isneginf(vals).any()
    if dtype == "float16":
        assert 65504.0 in finite


@pytest.mark.parametrize("seed", [1, 2])
def test_explore_catches_float16_overflow_near_the_top_of_range(broken_ops, seed):
    results = run_case(_case("broken_lp_halve", np.float16), checks=["explore"], seed=seed)
    failed = [r for r in results if r.status == "fail"]
    assert failed, [(r.status, r.message) for r in results]
    assert "65504" in failed[0].message and "float16" in failed[0].message, failed[0].message


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("seed", [1, 2])
def test_explore_passes_the_correct_low_precision_twin(broken_ops, dtype, seed):
    results = run_case(_case("good_lp_halve", dtype), checks=["explore"], seed=seed)
    assert not [r for r in results if r.status == "fail"], \
        [r.message for r in results if r.status == "fail"]
    assert any(r.status == "pass" and r.dtype == dtype for r in results), \
        [(r.status, r.dtype, r.message) for r in results]


@pytest.mark.parametrize("name", ["layout", "empty", "extremal", "kinks"])
def test_bfloat16_case_gets_the_variants(broken_ops, name):
    from harness.inputs.variants import derive

    case = _case("good_lp_halve", bfloat16)
    got = derive(name, case)
    got = got if isinstance(got, list) else [got]
    assert got and all(isinstance(d, Derived) for d in got), got
    for d in got:
        x = normalize_slots(d.case.inputs)["X"][0].data
        assert x.dtype == bfloat16


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_extremal_magnitudes_respect_the_dtype(broken_ops, dtype):
    from harness.inputs.variants import derive

    case = _case("good_lp_halve", dtype)
    by_kind = {d.info["kind"]: normalize_slots(d.case.inputs)["X"][0].data.astype(np.float64)
               for d in derive("extremal", case)}
    assert np.isfinite(by_kind["large"]).all() and np.abs(by_kind["large"]).max() == 100.0
    tiny = np.abs(by_kind["tiny"])
    assert tiny.max() > 0 and tiny.max() < 1e-3                    # not flushed to zero
    assert tiny.max() >= float(finfo(dtype).smallest_normal)
