"""The one check contract: every check is a Check in one table; the "add a check" example of
docs/harness.md runs exactly as written; unsupported variants are skips; kinds are typed."""
from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _doc_example() -> str:
    text = (ROOT / "docs" / "harness.md").read_text()
    section = text[text.index("### Adding a check"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def doc_check(tmp_path, monkeypatch):
    """The doc's module on sys.path and its line in CHECK_MODULES (a fresh registry)."""
    from harness.checks import catalog as registry

    (tmp_path / "fortran_order.py").write_text(_doc_example())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "CHECK_MODULES", registry.CHECK_MODULES + ["fortran_order"])
    monkeypatch.setattr(registry, "_CHECKS", {})
    monkeypatch.setattr(registry, "_loaded", False)
    yield registry.get_check("fortran_order")
    sys.modules.pop("fortran_order", None)


def _case(op_type, x):
    from harness.backend.case import Case

    return Case(name=f"T_{op_type}", op_type=op_type, inputs={"X": x}, attrs={},
                outputs={}, grad_inputs=["X"])


def test_the_docs_example_is_one_module_and_one_line(doc_check):
    from harness.checks.base import Check
    from harness.checks.catalog import check_names
    from harness.executing.pool import run_case

    assert isinstance(doc_check, Check) and doc_check.scope == "case"
    assert "fortran_order" in check_names()
    x = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4))
    got = run_case(_case("relu", x), checks=["fortran_order"], places=("CPU",))
    assert got and {r.status for r in got} == {"pass"}, got
    assert {r.dtype for r in got} == {"float32", "float64"}


def test_the_docs_example_fails_a_kernel_that_reads_memory_order(doc_check):
    """The example check catches a real bug: a kernel that reads its input in memory order
    (`ravel(order="K")`) fails it; its correct twin passes."""
    from harness.executing.pool import run_case

    importlib.import_module("tests.broken_ops.variant_breakers_op")
    x = np.arange(12, dtype=np.float64).reshape(3, 4) / 7.0 + 0.5
    bad = run_case(_case("broken_layout_scale", x), checks=["fortran_order"],
                   places=("CPU",))
    fails = [r for r in bad if r.status == "fail"]
    assert fails and all(r.kind == "mismatch" for r in fails), bad
    assert "C-order run gave" in fails[0].message
    good = run_case(_case("good_layout_scale", x), checks=["fortran_order"], places=("CPU",))
    assert {r.status for r in good} == {"pass"}, good


def test_every_registered_check_is_a_check_object_from_one_table():
    from harness.checks.base import Check
    from harness.checks.catalog import CHECK_MODULES, DEFAULT_CHECKS, all_checks

    checks = all_checks()
    assert all(isinstance(c, Check) for c in checks)
    names = [c.name for c in checks]
    for builtin in ("output", "grad", "dtypes", "mutation", "aliasing", "determinism", "lod",
                    "no_need_buffer", "inplace", "places"):
        assert builtin in names
    assert DEFAULT_CHECKS == [m.rsplit(".", 1)[1] for m in CHECK_MODULES]
    assert {c.name: c.scope for c in checks}["dtypes"] == "op"
    assert all(c.scope in ("case", "op") for c in checks)


def test_function_checks_and_entry_points_become_check_objects():
    from harness.checks.base import Check, FunctionCheck
    from harness.checks.catalog import as_check, get_check, register_check, unregister_check
    from harness.reporting.report import PASS, CheckResult

    def mine(case, context):
        return [CheckResult("mine", PASS, "CPU", "", case.name)]

    register_check("mine", mine, per_case=False)
    try:
        c = get_check("mine")
        assert isinstance(c, FunctionCheck) and c.scope == "op"
        assert [r.status for r in c(_case("relu", np.ones((2, 2))), None)] == ["pass"]
    finally:
        unregister_check("mine")

    class Sub(Check):
        name = "sub"
        per_case = False           # the older spelling: scope "op"

    assert as_check("sub", Sub).scope == "op"
    with pytest.raises(TypeError):
        as_check("bad", 42)


def test_an_unsupported_variant_is_a_skip_with_its_reason():
    """mutation runs on the case and its all-default-attrs variant: a case without attrs
    cannot default any, and says so (it used to be dropped silently)."""
    from harness.checks.catalog import get_check
    from harness.backend.context import CheckContext

    got = get_check("mutation")(_case("relu", np.ones((2, 3))), CheckContext(places=("CPU",)))
    skips = [r for r in got if r.status == "skip"]
    assert any("default_attrs" in r.message and "no attrs" in r.message for r in skips), got
    assert any(r.status == "pass" for r in got)


def test_failure_kind_is_a_field_that_json_keeps():
    from harness.reporting.report import FAIL, CheckResult, Status

    r = CheckResult("grad", "fail", "CPU", "float64", "T", "X: wrong", kind="wrong-value")
    assert r.status is FAIL and isinstance(r.status, Status)
    data = json.loads(json.dumps(r.to_json()))
    assert data["kind"] == "wrong-value" and data["status"] == "fail"
    assert CheckResult(**data) == r
    assert "kind" not in CheckResult("grad", "pass").to_json()


def test_refusal_is_decided_by_type_not_by_frame_name():
    """A kernel whose output breaks infer_shape raises a KernelContractError (a kernel bug);
    the op's own validation raises a plain typed error (a refusal)."""
    from harness.backend.seam import op_refused, refusal
    from opkit.framework import errors

    bug = errors.KernelInvalidArgument("produced shape %s", [2])
    assert isinstance(bug, errors.InvalidArgument) and not op_refused(bug)
    assert str(bug).startswith("InvalidArgument: ")          # the message is unchanged
    assert op_refused(errors.InvalidArgument("X must be 2-D"))
    assert refusal(errors.InvalidArgument("X must be 2-D"))
    assert not op_refused(errors.External("numpy said no"))
    assert not op_refused(ValueError("raw"))


@pytest.mark.parametrize("refused,status", [("pass", "pass"), ("skip", "skip"),
                                            ("fail", "fail")])
def test_compare_each_handles_refusals_base_failures_and_kinds(refused, status):
    """The template decides once: a typed opkit refusal of the variant follows `refused`; a
    raw exception is a KernelRaised failure; a failing base run is a skip; a compare message
    is a Mismatch; a (message, kind) pair keeps its kind."""
    from harness.backend.context import CheckContext
    from harness.checks.base import Check, Derived, WrongShape
    from opkit.framework import errors

    class T(Check):
        name = "t"

    case = _case("relu", np.ones((2, 3)))
    d = Derived("case", case, case)
    ctx = CheckContext(places=("CPU",), dtypes=("float64",))

    def refuse(combo):
        raise errors.InvalidArgument("X must be 2-D")

    got = T().compare_each(d, ctx, base=lambda c: {}, variant=refuse,
                           compare=lambda *a: None, refused=refused)
    assert [r.status for r in got] == [status], got

    def raw(combo):
        raise IndexError("index 0 is out of bounds")

    got = T().compare_each(d, ctx, variant=raw, compare=lambda *a: None, refused="pass")
    assert [(r.status, r.kind) for r in got] == [("fail", "kernel-raised")], got
    assert "IndexError" in got[0].message
    got = T().compare_each(d, ctx, base=raw, variant=lambda c: {}, compare=lambda *a: None)
    assert [r.status for r in got] == ["skip"]
    got = T().compare_each(d, ctx, variant=lambda c: {}, compare=lambda *a: "X: differs")
    assert [(r.status, r.kind) for r in got] == [("fail", "mismatch")]
    got = T().compare_each(d, ctx, variant=lambda c: {},
                           compare=lambda *a: ("X: shape (0,)", WrongShape))
    assert [r.kind for r in got] == ["wrong-shape"]


def test_compare_each_selects_combos_shares_base_runs_and_chains_the_variant():
    """`combos` picks the combos that run; `base_key` makes combos share one base run (and
    its failure: `base_skip(exc)` words the skip); `variant_takes_base` hands the base's runs
    to the variant; `raised_message(exc, combo)` words a raising variant's failure; a
    compare may return ready results."""
    from harness.backend.context import CheckContext
    from harness.checks.base import Check, Derived

    class T(Check):
        name = "t"

    case = _case("relu", np.ones((2, 3)))
    d = Derived("case", case, case)
    ctx = CheckContext(places=("CPU",), dtypes=("float32", "float64"))
    bases, seen = [], []

    def base(combo):
        bases.append(combo.dtype)
        return {"from": combo.dtype}

    def variant(combo, want):
        seen.append((combo.dtype, want["from"]))
        return {}

    got = T().compare_each(d, ctx, base=base, base_key=lambda c: c.place, variant=variant,
                           variant_takes_base=True, compare=lambda *a: None)
    assert [r.status for r in got] == ["pass", "pass"] and len(bases) == 1, (got, bases)
    assert seen == [("float32", "float32"), ("float64", "float32")]   # one shared base run

    got = T().compare_each(d, ctx, combos=lambda runnable: runnable[-1:],
                           variant=lambda c: {}, compare=lambda *a: None)
    assert [(r.status, r.dtype) for r in got] == [("pass", "float64")]

    def broken(combo):
        bases.append(combo.dtype)
        raise KeyError("no oracle")

    bases.clear()
    got = T().compare_each(d, ctx, base=broken, base_key=lambda c: c.place,
                           base_skip=lambda exc: f"no oracle ({type(exc).__name__})",
                           variant=lambda c: {}, compare=lambda *a: None)
    assert [(r.status, r.message) for r in got] == [("skip", "no oracle (KeyError)")] * 2
    assert len(bases) == 1                        # the failure is shared too

    def raw(combo):
        raise IndexError("index 0 is out of bounds")

    got = T().compare_each(d, ctx, variant=raw, compare=lambda *a: None,
                           raised_message=lambda exc, combo: f"{combo.dtype}: {exc}")
    assert [(r.status, r.message.split("\n")[0]) for r in got] == [
        ("fail", "float32: index 0 is out of bounds"),
        ("fail", "float64: index 0 is out of bounds")]
    assert {r.kind for r in got} == {"kernel-raised"}

    got = T().compare_each(d, ctx, variant=lambda c: {},
                           compare=lambda want, have, combo: [T().passed(d, combo, "ok", 0.5)])
    assert [(r.status, r.message, r.worst_error) for r in got] == [("pass", "ok", 0.5)] * 2
