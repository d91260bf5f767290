"""Issue 48: a kernel must not be able to tell it is being tested. The three checks
(`indistinguishable`, `honest_error`, `clean_process`) on the red team of
tests/broken_ops/adversarial_op.py (each broken op caught by the check of its class, every
twin clean), and their parts in process."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
NEW = "indistinguishable,honest_error,clean_process"

# broken op -> the issue-48 check of its class, which must fail it (others of the three may
# fail it too: a stale cache also disagrees with the clean process)
MUST = {
    "broken_adv_ptr_cache": "indistinguishable", "broken_adv_id_cache": "indistinguishable",
    "broken_adv_digest_cache": "indistinguishable", "broken_adv_seen_skip": "indistinguishable",
    "broken_adv_autotune3": "indistinguishable", "broken_adv_autotune10": "indistinguishable",
    "broken_adv_autotune50": "indistinguishable", "broken_adv_trust_after": "indistinguishable",
    "broken_adv_ones_cot": "indistinguishable", "broken_adv_onehot_cot": "indistinguishable",
    "broken_adv_cpu_mean": "indistinguishable", "broken_adv_threads_mean": "indistinguishable",
    "broken_adv_alarm_path": "indistinguishable", "broken_adv_time_budget": "indistinguishable",
    "broken_adv_mem_budget": "indistinguishable", "broken_adv_stack_oracle": "indistinguishable",
    "broken_adv_gc_oracle": "indistinguishable", "broken_adv_main_thread": "indistinguishable",
    "broken_adv_patch_compare": "clean_process", "broken_adv_import_test": "clean_process",
    "broken_adv_pid_path": "clean_process", "broken_adv_detect_harness": "clean_process",
    "broken_adv_bias_f64": "honest_error", "broken_adv_bias_f32": "honest_error",
    "broken_adv_poly_tanh": "honest_error", "broken_adv_size_sum": "honest_error",
}
# caught by the checks before issue 48 only (ownership, plan, concurrency)
OLD_ONLY = {"broken_adv_shared_buffer"}


def test_red_team_caught_by_its_check_and_twins_clean():
    env = dict(os.environ, NO_COLOR="1", OPKIT_NO_GPU="1")
    p = subprocess.run([sys.executable, "-c", "import sys; from opkit.cli.main import main; "
                        "sys.exit(main())", "test", "--ops", "tests/broken_ops/adversarial_op.py",
                        "--tests", "tests/broken_ops/adversarial_optests.py", "--checks", NEW,
                        "--format", "json"], cwd=ROOT, capture_output=True, text=True,
                       env=env, timeout=1200)
    assert p.returncode == 1, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    failed = {o["op"]: {c["check"] for c in o["checks"] if c["status"] == "fail"}
              for o in doc["ops"]}
    for op, check in MUST.items():
        assert check in failed[op], (op, failed[op])
        assert failed[op.replace("broken_", "good_")] == set(), op
    for op in OLD_ONLY:
        assert failed[op.replace("broken_", "good_")] == set(), op
    msgs = {o["op"]: [c["message"] for c in o["checks"] if c["status"] == "fail"]
            for o in doc["ops"]}
    # a failure names the two runs that disagree and shows both values
    assert any("first run vs a run with os.cpu_count() = 3" in m
               for m in msgs["broken_adv_cpu_mean"]), msgs["broken_adv_cpu_mean"]
    assert any("not linear in the cotangent" in m for m in msgs["broken_adv_ones_cot"])
    assert any("biased" in m for m in msgs["broken_adv_bias_f64"])
    assert any("harness.judging.compare.compare" in m for m in msgs["broken_adv_patch_compare"])


# -- the parts, in process ------------------------------------------------------------------
def _specs(x):
    from harness.backend.case import VarSpec
    return {"X": [VarSpec("X", x)]}


def test_fresh_values_are_new_bytes_of_the_same_shape():
    from harness.inputs.production import fresh_values, one_changed

    x = np.random.default_rng(0).uniform(-1, 1, (4, 5))
    new = fresh_values(_specs(x), np.random.default_rng(1))["X"][0].data
    assert new.shape == x.shape and new.dtype == x.dtype and not np.isin(new, x).any()
    changed = one_changed(_specs(x))["X"][0].data
    assert int((changed != x).sum()) == 1 and changed.reshape(-1)[-1] != x.reshape(-1)[-1]


def test_special_cotangents_are_production_shapes():
    from harness.inputs.production import special_cotangents

    outs = {"Out": np.zeros((3, 4)), "Idx": np.zeros((3,), np.int64)}
    got = dict(special_cotangents(outs, ["Out", "Idx"]))
    assert set(next(iter(got.values()))) == {"Out"}       # float outputs only
    assert (got["all ones"]["Out"] == 1).all()
    onehot = got["one-hot rows"]["Out"]
    assert (np.count_nonzero(onehot, axis=1) == 1).all() and onehot.sum() == 3


def test_conditions_are_put_back():
    from harness.inputs.production import CONDITIONS

    count, env = os.cpu_count(), dict(os.environ)
    signal.setitimer(signal.ITIMER_REAL, 50.0)
    try:
        for _, condition in CONDITIONS:
            with condition():
                pass
        assert os.cpu_count() == count and dict(os.environ) == env
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 40
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def test_bias_test_flags_a_biased_error_and_passes_rounding():
    from harness.checks.adversarial.honest_error import judge

    rng = np.random.default_rng(5)
    want = rng.uniform(-1, 1, 400)
    eps = float(np.finfo(np.float32).eps)
    honest = want.astype(np.float32).astype(np.float64)            # correctly rounded
    cond = np.zeros_like(want)
    assert judge("Out", honest, want, cond, eps, 8 * eps, 256 * eps) is None
    biased = (want * (1 + 30 * eps)).astype(np.float32)
    msg = judge("Out", biased, want, cond, eps, 8 * eps, 256 * eps)
    assert msg and "biased" in msg and "in the direction of the value" in msg
    off = honest.copy()
    off[7] += 0.01
    msg = judge("Out", off, want, cond, eps, 8 * eps, 256 * eps)
    assert msg and "Out[7]" in msg and "more than rounding explains" in msg


def test_patched_finds_a_replaced_numpy_function(tmp_path):
    from opkit_fluid.checks.clean_process import patched

    src = tmp_path / "evil_op.py"
    src.write_text("def agree(*a, **k):\n    return True\n")
    mod = types.ModuleType("evil_op")
    exec(compile(src.read_text(), str(src), "exec"), mod.__dict__)
    saved = np.allclose
    try:
        assert patched([str(src)]) == []
        np.allclose = mod.agree
        assert "numpy.allclose" in patched([str(src)])
    finally:
        np.allclose = saved


@pytest.mark.parametrize("op", ["good_adv_detect_harness", "broken_adv_detect_harness"])
def test_clean_child_imports_no_harness(op):
    import tests.broken_ops.adversarial_op  # noqa: F401 - registers the ops
    from harness.backend.case import Case
    from harness.backend.dispatch import kernel_files
    from opkit_fluid.checks.clean_process import clean_run
    from harness.backend.seam import Combo

    x = np.random.default_rng(2).uniform(-1, 1, (3, 4))
    case = Case("T", op, {"X": x}, {}, {"Out": 2 * x})
    got = clean_run(case, Combo("CPU", "float64"), kernel_files(op), ["X"],
                    {"Out": np.ones((3, 4))})
    assert not [m for m in got["loaded"] if m.startswith("harness")]
    want = 2 * x if op.startswith("good") else x + x * 1.001
    np.testing.assert_allclose(got["arrays"]["Out"], want)
    np.testing.assert_allclose(got["arrays"]["X@GRAD"], 2 * np.ones((3, 4)))
