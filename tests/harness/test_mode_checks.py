"""The execution-mode checks (inplace, declared_inputs, concurrency, sparse, plan): each broken
op of tests/broken_ops/mode_breakers_op.py fails exactly its mode, with a message naming the
mode, the variable and the kernel line; each twin passes every check; and each mode's own
machinery does what it says (lockstep threads, plan runs, duplicate rows, the opt-outs)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests" / "broken_ops" / "test_mode_breakers.py"
OPS_FILE = "tests/broken_ops/mode_breakers_op.py"

EXPECT = {   # broken op -> (its check, texts the failure must show: mode, variable, line)
    "broken_inplace_sigmoid": ("inplace", ["in-place on", "X@GRAD[", "'X'",
                                           f"{OPS_FILE}:", 'x = ctx.input("X")']),
    "broken_inplace_axpy": ("inplace", ["variant 'repeated_input'", "in-place on", "Out[",
                                        f"{OPS_FILE}:", "broken_axpy_kernel"]),
    "broken_undeclared_exp": ("declared_inputs", ["only its declared inputs", "'Out'",
                                                  f"{OPS_FILE}:", "ctx.scope.find_var"]),
    "broken_nnb_fill": ("declared_inputs", ["shape-only placeholders", "'X'",
                                            f"{OPS_FILE}:", 'x = ctx.input("X")']),
    "broken_scratch_softmax": ("concurrency", ["4 threads at once", "Out[",
                                               f"{OPS_FILE}:", "broken_softmax_kernel"]),
    "broken_sparse_sgd": ("sparse", ["duplicate, unsorted rows", "ParamOut[",
                                     f"{OPS_FILE}:", "must sum duplicate rows"]),
    "broken_reuse_scale": ("plan", ["prepared plan, run 4", "'Out'", f"{OPS_FILE}:",
                                    "np.multiply(x, 2.0, out=buf)"]),
}
MODES = ("inplace", "declared_inputs", "concurrency", "sparse", "plan")


def _load():
    import importlib.util
    import sys

    name = "mode_breakers_op"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / OPS_FILE)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)


@pytest.fixture(scope="module")
def reports():
    from harness.selecting.discovery import discover
    from harness.executing.pool import run_ops

    _load()
    by_op = discover([str(TESTS)]).by_op()
    ops = sorted(o for o in by_op if o and ("broken_" in o or "good_" in o))
    return {r.op: r for r in run_ops(ops, by_op, isolate=True)}


@pytest.mark.parametrize("op", sorted(EXPECT))
def test_broken_op_fails_exactly_its_mode(reports, op):
    check, texts = EXPECT[op]
    failed = [c for c in reports[op].results if c.status == "fail"]
    assert {c.check for c in failed} == {check}, [(c.check, c.message[:300]) for c in failed]
    for text in texts:
        assert any(text in c.message for c in failed), (text, [c.message for c in failed])


@pytest.mark.parametrize("op", [o.replace("broken_", "good_") for o in sorted(EXPECT)])
def test_twin_passes_every_check(reports, op):
    results = reports[op].results
    failed = [(c.check, c.message[:200]) for c in results if c.status == "fail"]
    assert not failed
    mode = EXPECT[op.replace("good_", "broken_")][0]
    assert any(c.check == mode and c.status == "pass" for c in results), \
        [(c.check, c.status, c.message) for c in results if c.check == mode]


# -- the machinery of each mode -------------------------------------------------------------
def _case(op, inputs, outputs, attrs=None, grad=("X",)):
    from harness.backend.case import Case

    return Case(f"Test_{op}", op, inputs, attrs or {}, outputs, grad_inputs=list(grad),
                grad_outputs=["Out"] if grad else [])


def _run(check, case, **context):
    from harness.backend.context import CheckContext
    from harness.checks.catalog import get_check

    return get_check(check)(case, CheckContext(places=("CPU",), **context))


def test_inplace_really_runs_backward_in_place():
    """The good twin's forward reuses X's buffer, and the grad then reads Out (not X)."""
    _load()
    x = np.random.default_rng(1).uniform(-1, 1, (3, 4))
    res = _run("inplace", _case("good_inplace_sigmoid", {"X": x},
                                {"Out": 1 / (1 + np.exp(-x))}))
    passed = [r for r in res if r.status == "pass"]
    assert passed and all("buffer reused: good_inplace_sigmoid:X->Out" in r.message
                          for r in passed)


def test_concurrency_lockstep_interleaves_kernel_lines(register=True):
    """Two threads taking turns: the lines of their kernels alternate."""
    import threading

    from harness.checks.runs.concurrency import Lockstep

    order = []

    def kernel(k):          # this test file is user code: its lines take turns
        order.append(k)
        order.append(k)
        order.append(k)

    lock = Lockstep(2)

    def work(k):
        import sys

        if register:
            lock.register(k)             # what concurrency's threads do first
        lock.enter(k)                    # what the kernel hooks do around each kernel
        sys.settrace(lock.tracer(k))
        try:
            kernel(k)
        finally:
            sys.settrace(None)
            lock.done(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert order in ([0, 1] * 3, [1, 0] * 3), order


def test_concurrency_opt_out_names_the_reason(ops):
    from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator

    class Op(OperatorWithKernel):
        not_thread_safe = "draws from one global generator"

        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "out")
            self.add_comment("test op")

    register_operator("mode_unsafe_op", Op, Maker)
    register_kernel("mode_unsafe_op")(lambda ctx: ctx.set_output("Out", ctx.input("X") * 1.0))
    x = np.ones((2, 2))
    res = _run("concurrency", _case("mode_unsafe_op", {"X": x}, {"Out": x}, grad=()))
    assert [r.status for r in res] == ["skip"]
    assert "not thread-safe: draws from one global generator" in res[0].message


def test_sparse_rows_are_duplicated_unsorted_and_merge_back():
    from opkit_fluid.checks.sparse import duplicate_rows
    from opkit import SelectedRows

    dense = np.random.default_rng(3).uniform(-1, 1, (6, 3))
    rows, values, equivalent = duplicate_rows(dense, seed=5)
    assert len(rows) > len(set(rows)) and rows != sorted(rows)
    np.testing.assert_array_equal(SelectedRows(rows, 6, values).to_dense(), equivalent)
    assert (equivalent == 0).all(axis=1).sum() == 1      # one row left out


def test_sparse_skips_a_case_without_selected_rows():
    x = np.ones((2, 2))
    res = _run("sparse", _case("relu", {"X": x}, {"Out": x}))
    assert [r.status for r in res] == ["skip"] and "opkit_sparse_inputs" in res[0].message


def test_plan_runs_really_take_the_prepared_plan(monkeypatch):
    """The check's later runs go through Plan.run (not the plain path)."""
    from opkit.framework import plan as plan_module

    calls = []
    real = plan_module.Plan.run

    def spy(self, *a, **k):
        got = real(self, *a, **k)
        calls.append(got is not None)
        return got

    monkeypatch.setattr(plan_module.Plan, "run", spy)
    x = np.random.default_rng(2).uniform(-1, 1, (3, 4))
    res = _run("plan", _case("relu", {"X": x}, {"Out": np.maximum(x, 0)}))
    assert res and all(r.status == "pass" for r in res), [r.message for r in res]
    from opkit_fluid.checks.plan import RUNS

    assert calls.count(True) >= (RUNS - 2) * len(res)


def test_declared_inputs_scope_refuses_an_undeclared_name():
    from opkit_fluid.checks.declared_inputs import DeclaredScope, UndeclaredRead

    class Op:
        type = "some_op"

    scope = DeclaredScope(Op(), {"X"})
    assert scope.find_var("X") is None
    with pytest.raises(UndeclaredRead, match="'Y'"):
        scope.find_var("Y")


# -- concurrency's verdict does not depend on machine load ------------------------------------
@pytest.fixture
def hurried(monkeypatch):
    """The lockstep's waits made to expire ten times sooner, as a machine under heavy load
    makes them expire (a thread the OS puts aside for longer than WAIT)."""
    from harness.checks.runs.concurrency import Lockstep

    monkeypatch.setattr(Lockstep, "WAIT", 2e-3)
    monkeypatch.setattr(Lockstep, "ENTER_WAIT", 2e-3)


def _concurrency_message(op):
    from harness.selecting.discovery import discover
    from harness.executing.pool import run_ops

    _load()
    (report,) = run_ops([op], discover([str(TESTS)]).by_op(), checks=["concurrency"],
                        isolate=True)
    return sorted((r.status.value, r.case, r.message) for r in report.results
                  if r.check == "concurrency")


def test_concurrency_lockstep_order_holds_when_waits_expire(hurried):
    """Waits that time out at once (a loaded machine) do not change the order of lines."""
    for _ in range(5):
        test_concurrency_lockstep_interleaves_kernel_lines()


def test_concurrency_reports_the_same_racing_value_under_load(hurried, monkeypatch):
    first = _concurrency_message("broken_scratch_softmax")
    assert any(s == "fail" and "4 threads at once" in m for s, _, m in first), first
    for _ in range(4):
        assert _concurrency_message("broken_scratch_softmax") == first
    monkeypatch.undo()        # the default waits: the same message
    assert _concurrency_message("broken_scratch_softmax") == first
