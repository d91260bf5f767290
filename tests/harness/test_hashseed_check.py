"""`determinism` across processes: two fresh interpreters with different PYTHONHASHSEED
values must agree bitwise. broken_set_sum (adds a duplicable X in the iteration order of a
set of names) fails only there; its twin good_set_sum passes every check
(tests/broken_ops/hashseed_breakers_op.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests" / "broken_ops" / "test_hashseed_breakers.py"


def _load_ops():
    import importlib.util
    import sys

    from harness.selecting.discovery import discover

    name = "hashseed_breakers_op"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, ROOT / "tests" / "broken_ops" / "hashseed_breakers_op.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return discover([str(TESTS)]).by_op()


@pytest.fixture(scope="module")
def batch_runs():
    """run_ops with the comparison on (the default): how many fresh interpreters it
    started (harness.processes.fresh, the one protocol), and the reports. The per-op pair (harness.checks.runs.hashseed._run_children) must
    not run: the run's one pair does the work (a forked worker calling it would fail)."""
    import os
    import subprocess

    from harness.processes import fresh
    from harness.checks.runs import hashseed
    from harness.executing.pool import run_ops

    by_op = _load_ops()
    from harness import options

    before = os.environ.pop("OPKIT_HASH_SEEDS", None)
    saved_options = options._current
    options.use(None)                     # built again from the environment, without it
    started = []
    real_popen, real_own = subprocess.Popen, hashseed._run_children

    def counting_popen(*args, **kwargs):
        started.append(args[0])
        return real_popen(*args, **kwargs)

    def no_own_pair(*args, **kwargs):
        raise AssertionError("a worker started its own pair of interpreters")

    fresh.subprocess.Popen = counting_popen
    hashseed._run_children = no_own_pair
    try:
        reports = {r.op: r for r in run_ops(["broken_set_sum", "good_set_sum"], by_op,
                                            isolate=True)}
    finally:
        fresh.subprocess.Popen = real_popen
        hashseed._run_children = real_own
        if before is not None:
            os.environ["OPKIT_HASH_SEEDS"] = before
        options.use(saved_options)
    return started, reports


@pytest.fixture(scope="module")
def reports(batch_runs):
    return batch_runs[1]


def test_one_pair_of_interpreters_per_run(batch_runs):
    started, _ = batch_runs
    assert len(started) == 2, started          # two ops, one pair for the whole run


def test_off_with_opkit_hash_seeds_0(monkeypatch):
    from harness.executing.pool import run_ops

    by_op = _load_ops()
    monkeypatch.setenv("OPKIT_HASH_SEEDS", "0")
    from harness import options
    monkeypatch.setattr(options, "_current", None)   # a front door: built from the env again
    rep = run_ops(["broken_set_sum"], by_op, checks=["determinism"], isolate=True)[0]
    assert rep.status == "pass"
    assert not any("PYTHONHASHSEED" in c.message for c in rep.results)


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

    from harness.backend.case import Case
    from harness.backend.context import Combo
    from harness.checks.runs.hashseed import cross_process

    case = Case(name="made_in_code", op_type="relu", inputs={"X": np.ones((2, 2))},
                attrs={}, outputs={})
    status, reason = cross_process(case, [Combo("CPU", "float64")], 1)
    assert status == "skip" and "no OpTest source file" in reason


def test_child_that_cannot_rebuild_the_case_is_a_skip(tmp_path):
    import numpy as np

    from harness.backend.case import Case
    from harness.backend.context import Combo
    from harness.checks.runs.hashseed import cross_process

    f = tmp_path / "test_nothing.py"
    f.write_text("x = 1\n")
    case = Case(name="TestGone", op_type="relu", inputs={"X": np.ones((2, 2))}, attrs={},
                outputs={}, source=f"{f}::TestGone")
    status, reason = cross_process(case, [Combo("CPU", "float64")], 1)
    assert status == "skip" and "class TestGone not found" in reason, (status, reason)


def test_an_items_own_pair_uses_the_same_protocol(tmp_path, monkeypatch):
    """cross_process (a pytest item's own pair of interpreters) runs the batch protocol with
    one request: broken_set_sum differs between the two hash seeds, good_set_sum agrees."""
    from harness.checks.runs import hashseed
    from harness.backend.context import Combo
    from harness.selecting.discovery import instantiate

    monkeypatch.setattr(hashseed, "_cache_dir", lambda: str(tmp_path))
    by_op = _load_ops()
    verdicts = {}
    for op in ("broken_set_sum", "good_set_sum"):
        t = by_op[op][0]
        case = instantiate(t.cls, 2024).to_case()
        case.source = f"{t.path}::{t.name}"
        status, got = hashseed.cross_process(case, [Combo("CPU", "float64")], 2024)
        assert status == "ran", (op, status, got)
        verdicts[op] = got[("CPU", "float64")]
    assert verdicts["good_set_sum"] is None
    assert "PYTHONHASHSEED=0 and PYTHONHASHSEED=1 differ" in verdicts["broken_set_sum"]
    assert len(list(tmp_path.glob("*-hs0.npz"))) == 2      # cached per op for the siblings


def test_a_child_dying_after_an_op_does_not_fail_the_ops_it_finished(tmp_path):
    """Child 0 wrote op 0's arrays, then died before starting op 1: op 0 keeps its arrays
    (no problem recorded), op 1 and 2 are the ones without results."""
    from harness.checks.runs.hashseed import HASH_SEEDS, HashSeedBatch

    class Died:
        returncode = 1

        def poll(self):
            return 1

    batch = HashSeedBatch.__new__(HashSeedBatch)
    batch.requests = [{"classes": []}] * 3
    batch.folder = str(tmp_path)
    batch.op_timeout = 60
    batch.dirs = [str(tmp_path / f"hs{hs}") for hs in HASH_SEEDS]
    batch.problems = [{} for _ in HASH_SEEDS]
    batch.procs = [Died() for _ in HASH_SEEDS]
    for d in batch.dirs:
        (tmp_path / d).mkdir()
    (tmp_path / batch.dirs[0] / "o0.npz").write_bytes(b"")
    (tmp_path / batch.dirs[0] / "progress").write_text("0")
    batch._finish(0)
    assert sorted(batch.problems[0]) == [1, 2], batch.problems[0]
    assert "failed" in batch.problems[0][1]
