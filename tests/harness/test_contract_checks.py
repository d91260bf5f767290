"""The double_grad, grad_outputs and distribution checks (opkit_fluid/checks/double_grad.py,
grad_outputs.py, distribution.py; harness/judging/distributions.py): each broken op of
tests/broken_ops/contract_breakers_op.py fails its check with a concrete wrong value, its twin
and the built-in ops pass, and the goodness-of-fit tests keep their false-alarm bound."""
from __future__ import annotations

import math

import numpy as np
import pytest

from harness.judging.distributions import (Bernoulli, Categorical, Exponential, Normal, Sampler,
                                   Uniform, dkw_bound, hoeffding_bound)

TESTS = "tests/broken_ops/test_contract_breakers.py"


def _run(ops, checks, tests=TESTS, seed=2024):
    from harness.selecting.discovery import discover
    from harness.executing.pool import run_ops

    by_op = discover([tests]).by_op()
    reports = run_ops(ops, by_op, checks=checks, isolate=False, seed=seed)
    return {r.op: r.results for r in reports}


def _failed(results, check):
    return [r for r in results if r.check == check and r.status == "fail"]


# -- the goodness-of-fit tests ------------------------------------------------------------
def test_bounds_are_the_documented_ones():
    assert dkw_bound(20000, 1e-6) == pytest.approx(math.sqrt(math.log(2e6) / 40000))
    assert hoeffding_bound(100, 1e-6, 2) == pytest.approx(math.sqrt(math.log(4e6) / 200))


def test_normal_law_accepts_its_samples_and_rejects_variance_for_std():
    rng = np.random.default_rng(0)
    law = Normal(mean="mean", std="std")
    values, read = law.resolve({"mean": 1.0, "std": 2.0})
    assert values == {"mean": 1.0, "std": 2.0} and read == ["mean", "std"]
    assert law.test(rng.normal(1.0, 2.0, 20000), values, 1e-6) is None
    msg = law.test(rng.normal(1.0, math.sqrt(2.0), 20000), values, 1e-6)
    assert msg and "Kolmogorov-Smirnov distance" in msg


def test_uniform_and_exponential_laws():
    rng = np.random.default_rng(1)
    u = Uniform(min="min", max="max")
    v, _ = u.resolve({"min": -2.0, "max": 3.0})
    assert u.test(rng.uniform(-2, 3, 10000), v, 1e-6) is None
    assert "outside [-2, 3]" in u.test(rng.uniform(-2, 3.01, 10000), v, 1e-6)
    assert not u.valid({"min": 1.0, "max": 1.0})
    e = Exponential(rate=2.0)
    assert e.test(rng.exponential(0.5, 10000), {"rate": 2.0}, 1e-6) is None
    assert e.test(rng.exponential(1.0, 10000), {"rate": 2.0}, 1e-6)


def test_discrete_laws_reject_unknown_values_and_wrong_frequencies():
    rng = np.random.default_rng(2)
    b = Bernoulli(p=lambda a: 1 - a["dropout_prob"])
    v, read = b.resolve({"dropout_prob": 0.3})
    assert read == ["dropout_prob"] and v["p"] == pytest.approx(0.7)
    assert b.test((rng.random(5000) >= 0.3).astype(float), v, 1e-6) is None
    assert "frequency" in b.test((rng.random(5000) < 0.3).astype(float), v, 1e-6)
    c = Categorical(values=[0.0, 2.0], probs=[0.5, 0.5])
    assert "none of the declared values" in c.test(np.array([0.0, 2.0, 1.0]),
                                                   {"values": [0.0, 2.0],
                                                    "probs": [0.5, 0.5]}, 1e-6)


def test_reference_sampler_two_sample_test():
    rng = np.random.default_rng(3)
    s = Sampler(lambda r, a, n: r.gamma(a["k"], 1.0, n))
    v, read = s.resolve({"k": 2.0})
    assert read == ["k"]
    assert s.test(rng.gamma(2.0, 1.0, 5000), v, 1e-6, rng=rng) is None
    assert "two-sample" in s.test(rng.gamma(3.0, 1.0, 5000), v, 1e-6, rng=rng)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 6, 7])
def test_no_false_alarm_on_correct_samples(seed):
    rng = np.random.default_rng(100 + seed)
    assert Normal(0.0, 1.0).test(rng.normal(size=3000), {"mean": 0.0, "std": 1.0}, 1e-6) is None
    assert Uniform(0.0, 1.0).test(rng.random(3000), {"min": 0.0, "max": 1.0}, 1e-6) is None


def test_resolve_names_a_missing_attr():
    with pytest.raises(KeyError, match="attr 'sigma'"):
        Normal(mean=0.0, std="sigma").resolve({"std": 1.0})


# -- the checks on the broken ops and their twins -----------------------------------------
CASES = [
    ("broken_dg_tanh", "double_grad", "Out: 30 of 30 elements wrong"),
    ("broken_dg_sigmoid", "double_grad", "gives no gradient of Out"),
    ("broken_dg_mul", "double_grad", "X: 15 of 15 elements wrong"),
    ("broken_var_mean", "grad_outputs", "cotangents also on Mean"),
    ("broken_split_pair", "grad_outputs", "cotangents also on Second"),
    ("broken_scaled_norm", "grad_outputs", "the grad maker takes no Norm@GRAD"),
    ("broken_normal", "distribution", "with std="),
    ("broken_normal_f32", "distribution", "with float32"),
    ("broken_uniform", "distribution", "lie outside"),
    ("broken_dropout_keep", "distribution", "with dropout_prob="),
    ("broken_dropout_scale", "distribution", "none of the declared values"),
]


@pytest.mark.parametrize("op, check, text", CASES)
def test_broken_op_fails_its_check_and_twin_passes(broken_ops, op, check, text):
    twin = op.replace("broken_", "good_")
    got = _run([op, twin], [check, "output", "grad"])
    bad = _failed(got[op], check)
    assert bad and text in bad[0].message, got[op]
    assert "analytic" in bad[0].message or "samples" in bad[0].message
    assert not [r for r in got[op] if r.status == "fail" and r.check != check]
    assert not [r for r in got[twin] if r.status == "fail"], got[twin]
    assert [r for r in got[twin] if r.check == check and r.status == "pass"]


def test_builtin_ops_pass_double_grad_and_distribution():
    got = _run(["tanh", "relu", "square", "mul", "softmax", "elementwise_mul",
                "gaussian_random", "uniform_random", "dropout"],
               ["double_grad", "distribution"], tests="reference_ops/tests")
    for op, results in got.items():
        assert not [r for r in results if r.status == "fail"], (op, results)
    assert any(r.check == "double_grad" and r.status == "pass" for r in got["softmax"])
    assert any(r.check == "distribution" and r.status == "pass" for r in got["dropout"])


def test_distribution_is_inferred_for_paddle_convention_ops(broken_ops):
    from harness.backend.case import Case
    from harness.checks.values.distribution import inferred

    law = inferred(Case("c", "gaussian_random", {}, {"shape": [3], "seed": 1}))
    assert list(law) == ["Out"] and type(law["Out"]).__name__ == "Normal"
    assert type(inferred(Case("c", "good_uniform", {}, {}))["Out"]).__name__ == "Uniform"
    x = np.ones((2, 3))
    assert set(inferred(Case("c", "dropout", {"X": x}, {"dropout_prob": 0.3}))) == \
        {"Mask", "Out / X"}
    assert inferred(Case("c", "dropout", {"X": x}, {"is_test": True})) is None
    assert inferred(Case("c", "relu", {"X": x}, {})) is None


def test_grad_outputs_opt_out(broken_ops, tmp_path):
    src = tmp_path / "test_opt_out.py"
    src.write_text(
        "from tests.broken_ops.test_contract_breakers import TestBrokenScaledNorm\n"
        "class TestOptedOut(TestBrokenScaledNorm):\n"
        "    opkit_skip = {'grad_outputs': 'Norm is a diagnostic: no gradient by design'}\n",
        encoding="utf-8")
    got = _run(["broken_scaled_norm"], ["grad_outputs"], tests=str(src))
    (r,) = got["broken_scaled_norm"]
    assert r.status == "skip" and "no gradient by design" in r.message
