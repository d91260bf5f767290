"""Each runtime check catches its bug class (a broken op fails it) and passes the correct twin.

Built on hand-made Cases (no OpTest needed): harness.executing.pool.run_case runs checks in-process.
"""
from __future__ import annotations

import numpy as np
import pytest

from harness_test_helpers import make_case
from harness.options import override
from harness.executing.pool import run_case


def statuses(results, check):
    return {r.status for r in results if r.check == check}


def failed_checks(results):
    return {r.check for r in results if r.status == "fail"}


RUNTIME = ["dtypes", "mutation", "aliasing", "determinism", "no_need_buffer", "inplace", "places"]


@pytest.fixture(autouse=True)
def cpu_only():
    with override(place="all", dtype="all"):
        yield


def _shift_add_ref(x):
    out = x.copy()
    out[1:] += x[:-1]
    return {"Out": out}


def _wide(x=None):
    rng = np.random.default_rng(13)
    return rng.uniform(-1, 1, (6, 40)) * 10.0 ** rng.integers(-2, 1, (6, 40))


CASES = {
    # bug class: (broken op, twin, reference, check it must fail, extra case kwargs)
    "mutation": ("broken_mutate_scale", "good_mutate_scale", lambda x: {"Out": 2 * x}, {}),
    "aliasing": ("broken_alias_identity", "good_alias_identity", lambda x: {"Out": x.copy()}, {}),
    "determinism": ("broken_shuffled_sum", "good_shuffled_sum",
                    lambda x: {"Out": x.sum(axis=1)}, {"x": _wide()}),
    "dtypes": ("broken_f32_square", "good_f32_square", lambda x: {"Out": x * x}, {}),
    "no_need_buffer": ("broken_nnb_scale", "good_nnb_scale", lambda x: {"Out": 3 * x}, {}),
    "inplace": ("broken_shift_add", "good_shift_add", _shift_add_ref, {"shape": (6, 3)}),
}


@pytest.mark.parametrize("check", sorted(CASES))
def test_broken_op_fails_exactly_its_check(broken_ops, check):
    broken, _, ref, kw = CASES[check]
    results = run_case(make_case(broken, reference=ref, **kw), checks=RUNTIME)
    assert failed_checks(results) == {check}, [r for r in results if r.status == "fail"]


@pytest.mark.parametrize("check", sorted(CASES))
def test_twin_passes_every_check(broken_ops, check):
    _, good, ref, kw = CASES[check]
    results = run_case(make_case(good, reference=ref, **kw), checks=RUNTIME + ["output", "grad"])
    assert not failed_checks(results), [r for r in results if r.status == "fail"]


def test_mutation_names_op_input_and_line(broken_ops):
    results = run_case(make_case("broken_mutate_scale", reference=lambda x: {"Out": 2 * x}),
                       checks=["mutation"])
    msg = next(r.message for r in results if r.status == "fail")
    assert "broken_mutate_scale" in msg and "Input(X)" in msg
    assert "mutate_scale_op.py:" in msg and "buf -= buf.mean()" in msg


def test_mutation_read_only_write_names_the_input(broken_ops):
    """A plain write (x[...] = ...) hits the read-only view: ValueError, wrapped as External."""
    from harness.backend.case import Case
    from opkit import OperatorWithKernel, register_kernel, register_operator

    register_operator("fixture_writes_x", OperatorWithKernel)  # no maker: outputs from the case

    @register_kernel("fixture_writes_x")
    def kernel(ctx):
        x = ctx.input("X")
        _helper(x)
        ctx.set_output("Out", x * 1)

    case = Case("TestWritesX", "fixture_writes_x", {"X": np.ones((2, 3))}, {},
                {"Out": np.ones((2, 3))})
    results = run_case(case, checks=["mutation"])
    msg = next(r.message for r in results if r.status == "fail")
    assert "fixture_writes_x" in msg and "Input(X) variable 'X'" in msg
    assert "test_checks_runtime.py:" in msg and "a[0] = 5" in msg


def _helper(a):
    a[0] = 5


def test_determinism_reports_first_difference_and_ulps(broken_ops):
    results = run_case(make_case("broken_shuffled_sum", x=_wide(),
                                 reference=lambda x: {"Out": x.sum(axis=1)}),
                       checks=["determinism"])
    msg = next(r.message for r in results if r.status == "fail")
    assert "differs from run 1 at Out[" in msg and "ULP" in msg


def test_no_need_buffer_names_op_variable_and_line(broken_ops):
    results = run_case(make_case("broken_nnb_scale", reference=lambda x: {"Out": 3 * x}),
                       checks=["no_need_buffer"])
    msg = next(r.message for r in results if r.status == "fail")
    assert "broken_nnb_scale_grad" in msg and "'X'" in msg and "nnb_scale_op.py:" in msg


def test_no_need_buffer_hint_for_unread_inputs(broken_ops):
    # good_shift_add_grad reads only Out@GRAD: nothing to hint; relu_grad reads X (or Out)
    x = np.random.default_rng(1).uniform(-1, 1, (3, 4))
    from harness.backend.case import Case

    case = Case("TestElementwiseAdd", "elementwise_add", {"X": x, "Y": x.copy()}, {"axis": -1},
                {"Out": 2 * x}, grad_inputs=["X", "Y"], grad_outputs=["Out"])
    results = run_case(case, checks=["no_need_buffer"])
    assert statuses(results, "no_need_buffer") <= {"pass", "skip"}
    assert any("data-less" in r.message for r in results if r.status == "pass")


def test_inplace_reports_reuse_for_twin(broken_ops):
    results = run_case(make_case("good_shift_add", reference=_shift_add_ref, shape=(6, 3)),
                       checks=["inplace"])
    assert any("buffer reused" in r.message for r in results if r.status == "pass")


def test_inplace_skipped_without_declarations(broken_ops):
    results = run_case(make_case("good_sign_relu", reference=lambda x: {"Out": np.maximum(x, 0)}),
                       checks=["inplace"])
    assert statuses(results, "inplace") == {"skip"}


def test_dtypes_names_missing_kernel(broken_ops):
    results = run_case(make_case("broken_f32_square", reference=lambda x: {"Out": x * x}),
                       checks=["dtypes"])
    msg = next(r.message for r in results if r.status == "fail")
    assert "broken_f32_square" in msg and "float64" in msg


def test_places_skipped_with_reason_without_gpu(broken_ops, monkeypatch):
    monkeypatch.setenv("OPKIT_NO_GPU", "1")
    from harness import options
    monkeypatch.setattr(options, "_current", None)   # a front door: built from the env again
    results = run_case(make_case("good_sign_relu", reference=lambda x: {"Out": np.maximum(x, 0)}),
                       checks=["places"])
    assert statuses(results, "places") == {"skip"}
    assert any("GPU" in r.message for r in results)


def test_settings_restrict_dtypes(broken_ops):
    with override(dtype="float32"):
        results = run_case(make_case("good_sign_relu",
                                     reference=lambda x: {"Out": np.maximum(x, 0)}),
                           checks=["determinism"])
    assert {r.dtype for r in results if r.status == "pass"} == {"float32"}


def test_reference_ops_pass_runtime_checks():
    x = np.random.default_rng(3).uniform(-1, 1, (4, 5))
    from harness.backend.case import Case

    cases = [Case("TestClip", "clip", {"X": x}, {"min": -0.5, "max": 0.5},
                  {"Out": np.clip(x, -0.5, 0.5)}, grad_inputs=["X"], grad_outputs=["Out"]),
             Case("TestReshape", "reshape", {"X": x}, {"shape": [5, 4]},
                  {"Out": x.reshape(5, 4)}, grad_inputs=["X"], grad_outputs=["Out"])]
    for case in cases:
        results = run_case(case, checks=RUNTIME)
        assert not failed_checks(results), [r for r in results if r.status == "fail"]


def test_places_compares_cpu_with_gpu_runs_on_compare_each(broken_ops, monkeypatch):
    """The places check's glue, without a GPU: its "GPU" runs are made on the CPU (a GPU
    that is the CPU agrees; a GPU run that differs fails with the value; a dtype with no CPU
    kernel is a skip), through Check.compare_each."""
    from harness import options
    from harness.backend import context as support
    from harness.checks.values import places
    from harness.backend.seam import Combo

    monkeypatch.setenv("OPKIT_PLACE", "all")
    monkeypatch.delenv("OPKIT_NO_GPU", raising=False)
    monkeypatch.setattr(options, "_current", None)
    monkeypatch.setattr(places, "gpu_unavailable_reason", lambda: None)
    monkeypatch.setattr(support, "gpu_unavailable_reason", lambda: None)
    real_prepare = places.prepare
    monkeypatch.setattr(places, "prepare", lambda case, combo: real_prepare(
        case, Combo("CPU", combo.dtype)))
    case = make_case("relu", reference=lambda x: {"Out": np.maximum(x, 0)}, grad=False)
    results = [r for r in run_case(case, checks=["places"]) if r.place == "GPU"]
    assert results and {r.status for r in results} == {"pass"}, results

    real_run = places.run_forward_backward

    def off_by_one_on_gpu(prepared, case, seed):
        runs = real_run(prepared, case, seed=seed)
        if off_by_one_on_gpu.calls % 2:        # every second run: the "GPU" one
            runs = {n: (v + 1 if v is not None and v.dtype.kind == "f" else v)
                    for n, v in runs.items()}
        off_by_one_on_gpu.calls += 1
        return runs

    off_by_one_on_gpu.calls = 0
    monkeypatch.setattr(places, "run_forward_backward", off_by_one_on_gpu)
    results = [r for r in run_case(case, checks=["places"]) if r.place == "GPU"]
    failed = [r for r in results if r.status == "fail"]
    assert failed and all("GPU" in r.message and "CPU" in r.message for r in failed), results
