"""`determinism` across processes: two fresh interpreters with different PYTHONHASHSEED
values must agree bitwise. broken_set_sum (adds a duplicable X in the iteration order of a
set of names) fails only there; its twin good_set_sum passes every check
(tests/broken_ops/hashseed_breakers_op.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests" / "broken_ops" / "test_hashseed_breakers.py"


@pytest.fixture(scope="module")
def reports():
    import importlib.util
    import os
    import sys

    before = os.environ.get("OPKIT_HASH_SEEDS")
    os.environ["OPKIT_HASH_SEEDS"] = "1"     # the across-process comparison is opt-in

    from harness.discovery import discover
    from harness.run import run_ops

    name = "hashseed_breakers_op"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, ROOT / "tests" / "broken_ops" / "hashseed_breakers_op.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    by_op = discover([str(TESTS)]).by_op()
    try:
        yield {r.op: r for r in run_ops(["broken_set_sum", "good_set_sum"], by_op,
                                        isolate=True)}
    finally:
        if before is None:
            os.environ.pop("OPKIT_HASH_SEEDS", None)
        else:
            os.environ["OPKIT_HASH_SEEDS"] = before


def test_broken_set_sum_fails_only_determinism_across_processes(reports):
    res = reports["broken_set_sum"].results
    failed = [c for c in res if c.status == "fail"]
    assert {c.check for c in failed} == {"determinism"}, [(c.check, c.message) for c in failed]
    assert {c.dtype for c in failed} == {"float32", "float64"}
    for c in failed:
        assert "PYTHONHASHSEED=0 and PYTHONHASHSEED=1 differ at Out[" in c.message, c.message
        # both values and the ULP distance are shown
        assert " vs " in c.message and "ULP" in c.message
    # repeated runs inside one process agree: the bug is invisible there
    assert any(c.check == "determinism" and c.status == "pass" and
               "runs bitwise identical" in c.message for c in res)


def test_good_set_sum_passes_every_check(reports):
    res = reports["good_set_sum"].results
    assert not [(c.check, c.message[:200]) for c in res if c.status == "fail"]
    assert any(c.check == "determinism" and c.status == "pass" and
               "fresh processes with PYTHONHASHSEED=0 and 1" in c.message for c in res)


def test_case_without_optest_source_is_skipped_with_reason():
    import numpy as np

    from harness.case import Case
    from harness.checks._support import Combo
    from harness.checks.hashseed import cross_process

    case = Case(name="made_in_code", op_type="relu", inputs={"X": np.ones((2, 2))},
                attrs={}, outputs={})
    status, reason = cross_process(case, [Combo("CPU", "float64")], 1)
    assert status == "skip" and "no OpTest source file" in reason


def test_child_that_cannot_rebuild_the_case_is_a_skip(tmp_path):
    import numpy as np

    from harness.case import Case
    from harness.checks._support import Combo
    from harness.checks.hashseed import cross_process

    f = tmp_path / "test_nothing.py"
    f.write_text("x = 1\n")
    case = Case(name="TestGone", op_type="relu", inputs={"X": np.ones((2, 2))}, attrs={},
                outputs={}, source=f"{f}::TestGone")
    status, reason = cross_process(case, [Combo("CPU", "float64")], 1)
    assert status == "skip" and "class TestGone not found" in reason, (status, reason)
