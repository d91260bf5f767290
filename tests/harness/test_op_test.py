"""OpTest.check_output / check_grad: raising, collecting, messages, tolerances."""
from __future__ import annotations

import numpy as np
import pytest

from harness import OpTest
from harness.reporting.report import FAIL, PASS, SKIP, collecting
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class _Maker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) output.")
        self.add_comment("test op")


class _SameShape(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class _GradShape(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))


def _grad_maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input("X", self.input("X"))
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            return [op]
    return Maker


def register_unary(op_type, forward, backward=None, dtypes=("float32", "float64")):
    """Register `op_type`: Out = forward(x) (and a grad op: dX = backward(x, dout))."""
    maker = _grad_maker(op_type + "_grad") if backward else None
    register_operator(op_type, _SameShape, _Maker, grad_maker=maker)
    register_kernel(op_type, dtypes=dtypes)(lambda ctx: ctx.set_output("Out", forward(
        ctx.input("X"))))
    if backward:
        register_operator(op_type + "_grad", _GradShape)
        register_kernel(op_type + "_grad", dtypes=dtypes)(
            lambda ctx: ctx.set_output(grad_var_name("X"), backward(
                ctx.input("X"), ctx.input(grad_var_name("Out")))))


def make_test(op_type, x, expected, attrs=None, **extra):
    """An OpTest instance (the class is made here so pytest does not collect it)."""
    def setUp(self):
        self.op_type = op_type
        self.inputs = {"X": x}
        self.attrs = attrs or {}
        self.outputs = {"Out": expected}

    cls = type("TestMade", (OpTest,), {"setUp": setUp, "runTest": lambda self: None, **extra})
    test = cls()
    test.setUp()
    return test


X = np.random.default_rng(3).uniform(-1, 1, (4, 5))


def test_check_output_passes_on_a_correct_op(ops):
    register_unary("t_double", lambda x: 2 * x)
    results = make_test("t_double", X, 2 * X).check_output()
    done = {(r.place, r.dtype) for r in results if r.status == PASS}
    assert ("CPU", "float32") in done and ("CPU", "float64") in done


def test_check_output_catches_a_wrong_kernel_and_reports_fields(ops):
    def wrong(x):
        out = 2 * x
        out[1, 2] += 0.5
        return out

    register_unary("t_wrong", wrong)
    with pytest.raises(AssertionError) as info:
        make_test("t_wrong", X, 2 * X).check_output()
    msg = str(info.value)
    for field in ("op 't_wrong'", "CPU", "float64", "float32", "'Out'", "(4, 5)",
                  "1 of 20 elements differ", "Out[1, 2]", "actual", "expected",
                  "abs error 0.5", "rel error", "atol", "rtol", "reproduce: python -m pytest",
                  # TestMade is made in a factory, not a module attribute: selected by -k
                  '-k "TestMade and test_check_output"', "opkit test t_wrong"):
        assert field in msg, (field, msg)
    expected = 2 * X[1, 2]
    assert repr(float(expected + 0.5))[:8] in msg


def test_shape_and_dtype_compared_before_values(ops):
    register_unary("t_two", lambda x: 2 * x)
    with pytest.raises(AssertionError, match=r"shape \(4, 5\), expected \(5, 4\)"):
        make_test("t_two", X, 2 * X.T).check_output()
    register_unary("t_int", lambda x: x.astype("int32"), dtypes=("int32",))
    xi = np.arange(6, dtype="int32").reshape(2, 3)
    with pytest.raises(AssertionError, match="dtype int32, expected int64"):
        make_test("t_int", xi, xi.astype("int64")).check_output()
    results = make_test("t_int", xi, xi.copy()).check_output()   # int-only op: runs as given
    assert [r.status for r in results if r.place == "CPU"] == [PASS]


def test_atol_and_rtol_are_honoured(ops):
    register_unary("t_off", lambda x: x + 1e-4)
    test = make_test("t_off", X + 10.0, X + 10.0)
    with pytest.raises(AssertionError):
        test.check_output()
    test.check_output(atol=2e-4)                 # absolute tolerance alone
    test.check_output(atol=0.0, rtol=1e-4)       # relative: 1e-4 / ~10 = 1e-5 < 1e-4
    with pytest.raises(AssertionError, match="atol 0 \\+ rtol 1e-07"):
        test.check_output(atol=0.0, rtol=1e-7)


def test_no_check_set_and_equal_nan(ops):
    register_unary("t_nan", lambda x: np.where(x > 0, np.nan, x))
    want = np.where(X > 0, np.nan, X)
    test = make_test("t_nan", X, want)
    with pytest.raises(AssertionError):
        test.check_output()
    test.check_output(equal_nan=True)
    test.check_output(no_check_set=["Out"])


def test_output_lod_is_compared(ops):
    class Drop(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    register_operator("t_droplod", Drop, _Maker)
    register_kernel("t_droplod")(lambda ctx: ctx.set_output("Out", ctx.input("X") * 1.0))
    x = np.ones((5, 2))
    test = make_test("t_droplod", (x, [[2, 3]]), (x, [[2, 3]]))
    with pytest.raises(AssertionError, match="LoD"):
        test.check_output()
    register_unary("t_keeplod", lambda x: x * 1.0)
    make_test("t_keeplod", (x, [[2, 3]]), (x, [[2, 3]])).check_output()


def test_collecting_appends_results_instead_of_raising(ops):
    register_unary("t_bad", lambda x: x + 1.0, lambda x, d: -d)
    test = make_test("t_bad", X, X)
    case = test.to_case()
    assert case.name == "TestMade" and case.op_type == "t_bad"
    assert "test_op_test.py::TestMade" in case.source
    with collecting() as results:
        test.check_output(atol=1e-3)
        test.check_grad(["X"], "Out", max_relative_error=0.01)
    assert {r.check for r in results} == {"output", "grad"}
    assert all(r.status in (FAIL, SKIP) for r in results)
    assert any(r.status == FAIL and r.check == "grad" for r in results)
    # what was checked is recorded on the case handed out and on later ones
    for c in (case, test.to_case()):
        assert c.grad_inputs == ["X"] and c.grad_outputs == ["Out"]
        assert c.options["max_relative_error"] == 0.01 and c.options["atol"] == 1e-3


def test_gpu_is_a_skip_with_the_reason_when_unusable(ops, monkeypatch):
    monkeypatch.setenv("OPKIT_NO_GPU", "1")
    from harness import options
    monkeypatch.setattr(options, "_current", None)   # a front door: built from the env again
    register_operator("t_gpu", _SameShape, _Maker)
    register_kernel("t_gpu", place=("CPU", "GPU"))(lambda ctx: ctx.set_output(
        "Out", ctx.input("X") * 1.0))
    results = make_test("t_gpu", X, X).check_output()
    skips = [r for r in results if r.status == SKIP]
    assert skips and skips[0].place == "GPU" and "OPKIT_NO_GPU" in skips[0].message


def test_reference_becomes_the_cases_reference(ops):
    register_unary("t_ref", lambda x: 3 * x)

    def reference(self, inputs, attrs):
        return {"Out": 3 * inputs["X"]}

    test = make_test("t_ref", X, 3 * X, reference=reference)
    case = test.to_case()
    assert np.allclose(case.reference(case.inputs, case.attrs)["Out"], 3 * X)


def test_methods_declare_and_output_judges_the_declarations(ops):
    """Inside declaring() a check_output call runs no kernel: it returns a Declared holding
    the Case as it stood (a later change of the test's attrs or outputs is not seen) and the
    run's place at the call; the `output` check judges it through the one output judge."""
    from harness.backend.context import CheckContext
    from harness.checks.catalog import get_check
    from harness.optest.methods import Declared, declaring
    from harness.options import override

    runs = []

    def kernel(x):
        runs.append(1)
        return 2 * x

    register_unary("t_declared", kernel)
    test = make_test("t_declared", X, 2 * X)
    with declaring() as plan:
        with override(place="CPU"):
            first = test.check_output(atol=1e-6)
        test.outputs["Out"] = 3 * X          # the second call expects a wrong value
        second = test.check_output()
    assert runs == [] and plan == [first, second]
    assert all(isinstance(d, Declared) and d.results is None for d in plan)
    assert first.arguments["atol"] == 1e-6 and first.options.places == ("CPU",)
    assert np.array_equal(first.case.outputs["Out"], 2 * X)

    context = CheckContext(test=test)
    context.cache["optest"] = plan
    got = get_check("output")(test.to_case(), context)
    assert runs, "the check ran the kernel"
    assert {(r.place, r.status) for r in first.results} == {("CPU", PASS)}
    assert any(r.status == FAIL and "Out" in r.message for r in second.results)
    assert [(r.place, r.dtype, r.status) for r in got] == \
        [(r.place, r.dtype, r.status) for d in plan for r in d.results]
