"""check_grad and the numeric-gradient engine (colouring, fast mode, bisection)."""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.case import Case
from harness.judging.grad_judge import check_grad
from harness.judging.output_judge import prepare_case
from harness.judging.numeric_gradient import NumericEngine
from harness.reporting.report import FAIL, PASS
from harness.backend.seam import make_cotangents

from test_op_test import X, make_test, register_unary


def _square_grad_one_wrong(x, d):
    g = 2 * x * d
    g.reshape(-1)[7] *= 3.0          # element 7 (X[1, 2] of a (4, 5) input) is wrong
    return g


def _statuses(results):
    return {(r.place, r.dtype): r.status for r in results if r.place == "CPU"}


def test_passes_on_correct_ops(ops):
    register_unary("t_sq", lambda x: x * x, lambda x, d: 2 * x * d)
    for mode in ("exact", "fast", "dense", "auto"):
        results = make_test("t_sq", X, X * X).check_grad(["X"], "Out", mode=mode)
        assert set(_statuses(results).values()) == {PASS}, results


def test_wrong_sign_is_caught_in_every_mode(ops):
    register_unary("t_neg", lambda x: x * x, lambda x, d: -2 * x * d)
    for mode in ("exact", "fast", "dense"):
        with pytest.raises(AssertionError) as info:
            make_test("t_neg", X, X * X).check_grad(["X"], "Out", mode=mode)
        msg = str(info.value)
        for field in ("op 't_neg'", "CPU float64", "CPU float32", "analytic", "numeric",
                      "error", "reproduce:"):
            assert field in msg, (mode, field, msg)


def test_one_wrong_element_is_found_exact_mode(ops):
    register_unary("t_one", lambda x: x * x, _square_grad_one_wrong)
    with pytest.raises(AssertionError) as info:
        make_test("t_one", X, X * X).check_grad(["X"], "Out", mode="exact")
    msg = str(info.value)
    assert "1 of 20 elements exceed the float64 bound" in msg
    assert "1 of 20 elements exceed max relative error 0.01" in msg   # float32
    assert "worst X[1, 2]: analytic" in msg


def test_one_wrong_element_is_found_fast_mode_on_a_large_input(ops):
    register_unary("t_one_big", lambda x: x * x, _square_grad_one_wrong)
    big = np.random.default_rng(5).uniform(0.5, 1.5, (80, 100))
    case = make_test("t_one_big", big, big * big).to_case()
    results = check_grad(case, ["X"], ["Out"], mode="fast")
    bad = [r for r in results if r.status == FAIL]
    assert bad and all("X[0, 7]" in r.message for r in bad), results
    assert "fast mode found 1 wrong element" in bad[0].message
    # auto on 8000 elements of an elementwise op: the colouring (1 colour) stays exact
    results = check_grad(case, ["X"], ["Out"], mode="auto")
    assert all("1 of 8000 elements" in r.message for r in results if r.status == FAIL)


def test_vacuous_gradient_passes_with_a_warning(ops):
    register_unary("t_sign", np.sign, lambda x, d: np.zeros_like(x))
    x = np.random.default_rng(1).uniform(0.1, 1, (3, 4)) * np.where(np.arange(12) % 2, 1, -1
                                                                     ).reshape(3, 4)
    results = make_test("t_sign", x, np.sign(x)).check_grad(["X"], "Out")
    assert all(r.status == PASS for r in results if r.place == "CPU")
    assert all("vacuous: numeric gradient of X is zero everywhere" in r.message
               for r in results if r.place == "CPU")
    # a non-zero analytic gradient where the numeric one is zero is a failure
    register_unary("t_sign_bad", np.sign, lambda x, d: d * 1.0)
    with pytest.raises(AssertionError, match="zero everywhere"):
        make_test("t_sign_bad", x, np.sign(x)).check_grad(["X"], "Out")


def _mul_case(m=4, k=5, n=3, seed=9):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, (m, k)), rng.uniform(-1, 1, (k, n))
    return Case("TestMul", "mul", {"X": x, "Y": y}, {}, {"Out": x @ y})


def test_no_grad_set():
    case = _mul_case()
    results = check_grad(case, ["X"], ["Out"], no_grad_set={"Y"})
    assert set(_statuses(results).values()) == {PASS}
    results = check_grad(case, ["X", "Y"], ["Out"], no_grad_set={"Y"})
    assert results[0].status == FAIL and "both in inputs_to_check and no_grad_set" in \
        results[0].message


def test_user_defined_grads(ops):
    register_unary("t_sq2", lambda x: x * x, lambda x, d: 2 * x * d)
    test = make_test("t_sq2", X, X * X)
    test.check_grad(["X"], "Out", user_defined_grads=[2 * X / X.size])   # Paddle: mean loss
    with pytest.raises(AssertionError, match="X\\["):
        test.check_grad(["X"], "Out", user_defined_grads=[3 * X / X.size])


def test_random_cotangent_not_ones_makes_softmax_checkable():
    x = np.random.default_rng(2).uniform(-1, 1, (3, 6))
    e = np.exp(x - x.max(1, keepdims=True))
    case = Case("TestSoftmax", "softmax", {"X": x}, {"axis": -1}, {"Out": e / e.sum(1, keepdims=True)})
    results = check_grad(case, ["X"], ["Out"])
    assert set(_statuses(results).values()) == {PASS}
    assert not any("vacuous" in r.message for r in results)


# -- the engine ------------------------------------------------------------------------------
def _engine(case, outputs=("Out",)):
    prepared = prepare_case(case, "CPU", "float64")
    outs = prepared.forward()
    return NumericEngine(prepared, make_cotangents(outs, list(outputs)))


def _dense_and_coloured(case, name):
    dense_engine = _engine(case)
    dense = dense_engine.exact(name, dense=True)
    engine = _engine(case)
    coloured = engine.exact(name)
    np.testing.assert_allclose(coloured, dense, rtol=1e-9, atol=1e-12)
    return engine, dense_engine


def test_colouring_elementwise_uses_one_colour():
    x = np.random.default_rng(4).uniform(0.5, 1, (16, 32))
    case = Case("TestSquare", "square", {"X": x}, {}, {"Out": x * x})
    engine, dense = _dense_and_coloured(case, "X")
    s = engine.info["X"]["structure"]
    assert s.separating == (0, 1) and s.colours == 1
    assert engine.info["X"]["method"] == "coloured"
    # discovery: 2 runs per bit of each axis (4 + 5 bits); the colour and the spot check
    # each take 2 central-difference pairs (steps h and h/2: Richardson)
    assert engine.info["X"]["forward_runs"] <= 1 + 2 * (4 + 5) + 4 + 4
    assert dense.info["X"]["forward_runs"] == 4 * x.size + 1     # + the base point


def test_colouring_softmax_rows_and_mul():
    x = np.random.default_rng(6).uniform(-1, 1, (16, 10))
    e = np.exp(x - x.max(1, keepdims=True))
    case = Case("TestSoftmax", "softmax", {"X": x}, {"axis": -1}, {"Out": e / e.sum(1, keepdims=True)})
    engine, _ = _dense_and_coloured(case, "X")
    s = engine.info["X"]["structure"]
    assert s.separating == (0,) and s.colours == 10
    assert engine.info["X"]["forward_runs"] < 4 * 10 + 2 * (4 + 4) + 6

    case = _mul_case(12, 7, 5)
    engine, _ = _dense_and_coloured(case, "X")
    assert engine.info["X"]["structure"].colours == 7          # one per column of X
    engine, _ = _dense_and_coloured(case, "Y")
    assert engine.info["Y"]["structure"].colours == 7          # one per row of Y


def test_colouring_dense_op_has_one_colour_per_element():
    x = np.random.default_rng(8).uniform(-1, 1, (4, 6))
    case = Case("TestMean", "mean", {"X": x}, {}, {"Out": np.array([x.mean()])})
    engine, _ = _dense_and_coloured(case, "X")
    assert engine.info["X"]["structure"].colours == x.size


def test_fast_mode_localizes_wrong_elements(ops):
    register_unary("t_one_fast", lambda x: x * x, _square_grad_one_wrong)
    x = np.random.default_rng(12).uniform(0.5, 1.5, (64, 64))
    case = Case("T", "t_one_fast", {"X": x}, {}, {"Out": x * x})
    engine = _engine(case)
    prepared = prepare_case(case, "CPU", "float64")
    prepared.forward()
    cot = make_cotangents({"Out": x * x}, ["Out"])
    analytic = prepared.backward(cot, ["X"])["X"]
    before = engine.forward_runs
    found = []
    for u, d in engine.directions("X"):
        if engine.direction_error(u, analytic, d) > 0.005:
            found = engine.localize("X", analytic, u, 0.005)
            break
    assert [tuple(int(i) for i in f.index) for f in found] == [(0, 7)]
    # bisection costs O(log N) runs, far from the 2N of the per-element loop
    assert engine.forward_runs - before < 200
