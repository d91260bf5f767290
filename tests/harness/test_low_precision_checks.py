"""float16 / bfloat16: each low-precision bug class is caught by the check named for it and
its twin passes every check (tests/broken_ops/low_precision_breakers_op.py)."""
from __future__ import annotations

import numpy as np
import pytest

from harness_test_helpers import make_case
from harness.options import override
from harness.executing.pool import run_case

CHECKS = ["output", "grad", "dtypes", "precision"]


def _rows(seed=5, shape=(4, 256)):
    return np.random.default_rng(seed).uniform(0.1, 1.0, shape)


CASES = {
    # op base: (reference, input, the check that must fail, words its message must hold)
    "lp_row_sum": (lambda x: {"Out": x.sum(axis=-1)}, _rows(), "precision",
                   ("float16", "accumulates or computes in float16")),
    "lp_row_norm": (lambda x: {"Out": np.sqrt((x * x).sum(axis=-1))}, _rows(shape=(4, 6)),
                    "dtypes", ("float16", "overflow in an intermediate", "'Out'")),
    "lp_scale": (lambda x: {"Out": 1.7 * x}, _rows(shape=(6, 8)), "precision",
                 ("bfloat16", "toward zero (truncated)")),
    "lp_twin": (lambda x: {"Out": x * x}, _rows(shape=(3, 4)), "dtypes",
                ("broken_lp_twin_grad", "no bfloat16 kernel on CPU")),
}


@pytest.fixture(autouse=True)
def cpu_only():
    with override(place="CPU", dtype="all"):
        yield


def _failed(results):
    out: dict[str, str] = {}
    for r in results:
        if r.status == "fail":
            out[r.check] = (out.get(r.check, "") + "\n" + r.message).strip()
    return out


@pytest.mark.parametrize("base", sorted(CASES))
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_broken_op_caught_by_its_check(broken_ops, base, seed):
    ref, x, check, words = CASES[base]
    case = make_case(f"broken_{base}", x=x, reference=ref)
    failed = _failed(run_case(case, checks=CHECKS, seed=seed))
    assert check in failed, failed
    for w in words:
        assert w in failed[check], failed[check]


@pytest.mark.parametrize("base", sorted(CASES))
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_twin_passes_every_check(broken_ops, base, seed):
    ref, x, _, _ = CASES[base]
    results = run_case(make_case(f"good_{base}", x=x, reference=ref), checks=CHECKS, seed=seed)
    assert not _failed(results), _failed(results)
    judged = {(r.check, r.dtype) for r in results if r.status == "pass"}
    assert {("precision", "float16"), ("precision", "bfloat16")} <= judged


def test_twin_dtypes_pass_names_both_low_precision_dtypes(broken_ops):
    ref, x, _, _ = CASES["lp_row_sum"]
    results = run_case(make_case("good_lp_row_sum", x=x, reference=ref), checks=["dtypes"])
    msg = next(r.message for r in results if r.check == "dtypes" and r.place == "CPU")
    assert "float16 and bfloat16 within the float64 kernel's bounds" in msg


@pytest.mark.parametrize("base", sorted(CASES))
def test_broken_op_fails_only_its_check_among_all(broken_ops, base):
    ref, x, check, _ = CASES[base]
    failed = _failed(run_case(make_case(f"broken_{base}", x=x, reference=ref)))
    assert set(failed) == {check}, failed


def test_precision_takes_the_same_infinity_from_both_kernels_as_agreement():
    """softshrink(+inf) is +inf in float32 and float64: inf - inf is no precision error (a
    false alarm once a case fed infinities); a float32 inf against a finite float64 value
    still fails."""
    import numpy as np

    from harness.checks.values.precision import _judge_place

    v64 = np.array([np.inf, -np.inf, 1.5, np.nan])
    reference = ({"Out": v64}, None, None, {"Out": np.zeros(4)})
    problem, _ = _judge_place(reference, {"Out": v64.astype(np.float32)})
    assert problem is None
    wrong = np.array([np.inf, -np.inf, np.inf, np.nan], np.float32)
    problem, _ = _judge_place(reference, {"Out": wrong})
    assert problem is not None and "Out[2]" in problem and "inf" in problem
