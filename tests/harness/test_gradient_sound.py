"""The sound numeric gradient: scaled steps, Richardson extrapolation with an error estimate,
the float64 bound derived from it, and confirmation of a mismatch with a second step."""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.case import Case
from harness.judging.grad_judge import check_grad
from harness.judging.output_judge import prepare_case
from harness.judging.numeric_gradient import (CONFIRM_FACTOR, NumericEngine, compare, float64_bound,
                              relative_error)
from harness.reporting.report import FAIL, PASS
from harness.backend.seam import make_cotangents

from test_op_test import make_test, register_unary

# a log-loss near its domain edge: the point where a fixed step of 0.005 is far off
STEEP_X = np.random.default_rng(0).uniform(0.01, 0.03, (3, 4))


def _cpu(results):
    return {r.dtype: r for r in results if r.place == "CPU"}


def _fixed_step_error(x, delta=0.005):
    """Relative error of Paddle's fixed-step central difference of -log at x."""
    num = (-np.log(x + delta) + np.log(x - delta)) / (2 * delta)
    return np.abs(num - (-1 / x)) / np.abs(1 / x)


def test_steep_but_smooth_log_loss_passes_with_the_correct_gradient(ops):
    # premise: the old fixed step is several percent off at these points
    assert _fixed_step_error(STEEP_X).max() > 0.05
    register_unary("t_neglog", lambda x: -np.log(x), lambda x, d: -d / x)
    results = make_test("t_neglog", STEEP_X, -np.log(STEEP_X)).to_case()
    results = check_grad(results, ["X"], ["Out"], mode="exact")
    by = _cpu(results)
    assert by["float64"].status == PASS and by["float32"].status == PASS, results
    # and the float64 bound is tight there: a gradient off by 0.4% still fails
    register_unary("t_neglog_off", lambda x: -np.log(x), lambda x, d: -1.004 * d / x)
    case = make_test("t_neglog_off", STEEP_X, -np.log(STEEP_X)).to_case()
    by = _cpu(check_grad(case, ["X"], ["Out"], mode="exact"))
    assert by["float64"].status == FAIL, by


@pytest.mark.parametrize("mode", ["exact", "dense", "fast", "auto"])
def test_gradient_off_by_0_4_percent_fails_in_float64(ops, mode):
    x = np.random.default_rng(5).uniform(-1, 1, (4, 5))
    register_unary("t_tanh_off", np.tanh, lambda x, d: 1.004 * d * (1 - np.tanh(x) ** 2))
    case = make_test("t_tanh_off", x, np.tanh(x)).to_case()
    by = _cpu(check_grad(case, ["X"], ["Out"], mode=mode))
    assert by["float64"].status == FAIL, by
    msg = by["float64"].message
    # the worst element with both values
    assert "analytic" in msg and "numeric" in msg and "X[" in msg, msg
    # float32 keeps the test's max_relative_error (max(0.005, 0.01)): 0.4% passes there
    assert by["float32"].status == PASS, by
    # ... and the correct twin passes in float64
    register_unary("t_tanh", np.tanh, lambda x, d: d * (1 - np.tanh(x) ** 2))
    case = make_test("t_tanh", x, np.tanh(x)).to_case()
    by = _cpu(check_grad(case, ["X"], ["Out"], mode=mode))
    assert by["float64"].status == PASS, by


def test_failure_shows_index_analytic_and_both_numeric_values(ops):
    x = np.random.default_rng(2).uniform(0.5, 1.5, (3, 4))

    def grad(x, d):
        g = 2 * x * d
        g[2, 1] *= 1.01
        return g
    register_unary("t_sq_one", lambda x: x * x, grad)
    case = make_test("t_sq_one", x, x * x).to_case()
    msg = _cpu(check_grad(case, ["X"], ["Out"], mode="exact"))["float64"].message
    assert "1 of 12 elements exceed the float64 bound" in msg, msg
    assert "worst X[2, 1]: analytic" in msg and "confirmed with a 10x smaller step" in msg, msg


def _engine(case):
    prepared = prepare_case(case, "CPU", "float64")
    outs = prepared.forward()
    return NumericEngine(prepared, make_cotangents(outs, ["Out"])), prepared, outs


def test_error_estimate_covers_the_true_error(ops):
    x = np.random.default_rng(3).uniform(-2, 2, (5, 6))
    register_unary("t_exp", np.exp, lambda x, d: d * np.exp(x))
    case = Case("T", "t_exp", {"X": x}, {}, {"Out": np.exp(x)})
    engine, _, outs = _engine(case)
    cot = engine.cot.reshape(x.shape)
    true = cot * np.exp(x)
    num = engine.exact("X")
    est = engine.errors["X"]
    assert (np.abs(num - true) <= est + 1e-15).all()
    # Richardson: far more accurate than the plain central difference at the same step
    assert relative_error(num, true).max() < 1e-8
    # and the bound derived from it is orders of magnitude below Paddle's 0.005
    assert float64_bound(num, est).max() < 1e-4


def test_step_scales_with_the_input(ops):
    x = np.array([[1e-4, 0.02, 0.5, 3.0, -50.0]])
    register_unary("t_exp2", np.exp, lambda x, d: d * np.exp(x))
    case = Case("T", "t_exp2", {"X": x}, {}, {"Out": np.exp(x)})
    engine, _, _ = _engine(case)
    h = engine.steps("X")
    np.testing.assert_allclose(h, 0.005 * np.array([[0.01, 0.02, 0.5, 1.0, 1.0]]))
    np.testing.assert_allclose(engine.steps("X", CONFIRM_FACTOR), h * CONFIRM_FACTOR)


def test_a_mismatch_that_a_smaller_step_removes_is_not_reported(ops):
    # |x| with x within the step of its kink: the steps h and h/2 straddle the kink, the
    # confirming step (10x smaller) does not, and agrees with the analytic sign(x)
    x = np.array([[1e-5, 0.4, -0.7, 1.1]])
    register_unary("t_abs", np.abs, lambda x, d: d * np.sign(x))
    case = make_test("t_abs", x, np.abs(x)).to_case()
    engine, prepared, _ = _engine(case)
    analytic = prepared.backward({"Out": engine.cot.reshape(x.shape)}, ["X"])["X"]
    first = engine.exact("X")
    assert relative_error(analytic, first)[0, 0] > 0.1          # wrong at the first step
    c = compare(engine, "X", analytic)
    assert c.ok and c.unconfirmed == 1, vars(c)
    by = _cpu(check_grad(case, ["X"], ["Out"], mode="exact"))
    assert by["float64"].status == PASS, by


def test_float32_numerics_keep_the_fixed_step(ops):
    x = np.random.default_rng(1).uniform(0.5, 1.5, (2, 3))
    register_unary("t_sq32", lambda x: x * x, lambda x, d: 2 * x * d, dtypes=("float32",))
    case = make_test("t_sq32", x, x * x).to_case()
    prepared = prepare_case(case, "CPU", "float32")
    outs = prepared.forward()
    engine = NumericEngine(prepared, make_cotangents(outs, ["Out"]))
    np.testing.assert_allclose(engine.steps("X"), np.full(x.shape, 0.005))
    by = _cpu(check_grad(case, ["X"], ["Out"]))
    assert by["float32"].status == PASS, by


def test_many_kinks_at_once_are_probed_one_sidedly(ops):
    """A constant input to a max is a tie at every element (the fuzz of sequence_pool MAX on
    Paddle drew one: 98 of 133 elements off, over the old 64-element probe budget, and opkit's
    own op failed the same way): each analytic value that is a one-sided slope passes; a
    value that is neither still fails."""
    x = np.zeros((10, 12))             # relu at its kink, 120 elements
    register_unary("t_relu_ties", lambda x: np.maximum(x, 0.0), lambda x, d: d * (x > 0))
    case = make_test("t_relu_ties", x, np.maximum(x, 0.0)).to_case()
    by = _cpu(check_grad(case, ["X"], ["Out"], mode="exact"))
    assert by["float64"].status == PASS, by
    register_unary("t_relu_ties_off", lambda x: np.maximum(x, 0.0),
                   lambda x, d: d * np.where(x > 0, 1.0, 0.3))
    case = make_test("t_relu_ties_off", x, np.maximum(x, 0.0)).to_case()
    by = _cpu(check_grad(case, ["X"], ["Out"], mode="exact"))
    assert by["float64"].status == FAIL and "120 of 120" in by["float64"].message, by
