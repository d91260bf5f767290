"""`opkit test`: exit codes, JSON on stdout only, isolation of hangs and crashes, shards,
jobs, and the broken ops end to end (subprocess and Python API)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from harness_test_helpers import ROOT

EXPECTED = {   # broken op -> the checks it must fail (exactly)
    "broken_sign_relu": {"grad", "kinks"},   # kinks: the wrong sign at the kink too
    "broken_mutate_scale": {"mutation", "indistinguishable"},   # its input drifts call by call
    # the shuffle draws from numpy's global stream: a trace the user sees too (law 4)
    "broken_shuffled_sum": {"determinism", "trace"},
    "broken_f32_square": {"dtypes"},
    "broken_nnb_scale": {"no_need_buffer"},
    "broken_shift_add": {"inplace"},
    "broken_alias_identity": {"aliasing"},
    "broken_lod_scale": {"output", "lod"},   # the output's LoD (check_output) and/or `lod`
    # the variant checks (tests/broken_ops/variant_breakers_op.py)
    "broken_layout_scale": {"layout"},
    "broken_empty_center": {"empty"},
    "broken_naive_softmax": {"extremal"},
    "broken_kink_relu": {"kinks"},
    "broken_tie_max": {"kinks"},
    "broken_tie_relu_sum": {"kinks"},
    "broken_dedup_sum": {"repeated_input"},
    "broken_twice_rows": {"infer_shape"},
    "broken_seq_last": {"lod"},
    # its shared output buffer also breaks concurrent calls and a prepared plan's second run
    "broken_buffer_cache": {"ownership", "concurrency", "plan"},
    "broken_attr_sort": {"attrs"},
    "broken_scale_cache": {"state"},
    "broken_f16_tanh": {"precision"},
    # determinism across two fresh processes with other PYTHONHASHSEED values (on by
    # default; tests/harness/test_hashseed_check.py)
    "broken_set_sum": {"determinism"},
    # the classes a red-team round found uncovered (tests/broken_ops/coverage_breakers_op.py)
    "broken_onegrad_mul": {"grad"},          # only X requested: wrong gradient
    "broken_f64in32_tanh": {"precision"},    # float64 grad kernel computes in float32
    "broken_negaxis_softmax": {"attrs"},     # axis -2 taken as the last axis
    "broken_bias_scale": {"attrs"},          # bias_after_scale=False ignored
    "broken_int_relu": {"dtypes"},           # int kernel gives float64
    "broken_squeeze_sum": {"fuzz"},          # np.squeeze drops a batch of 1 (edge shapes)
    "broken_bcast_add": {"fuzz"},            # dY not summed over Y's size-1 dims (edge shapes)
    # wrong declared parallel signatures (tests/broken_ops/sbp_breakers_op.py)
    "broken_sbp_softmax": {"sbp"},           # splittable along its own axis
    "broken_sbp_rowsum": {"sbp"},            # a reduced axis declared split, not partial_sum
    "broken_sbp_transpose": {"sbp"},         # split axis not remapped by the transpose
    "broken_sbp_rowmean": {"sbp"},           # grad op: split reduced axis of a mean
    "broken_sbp_batchnorm": {"sbp"},         # reads the logical row count, declared row-split
    "broken_sbp_affine": {"sbp"},            # Out = 2X + 1 declared linear (partial_sum)
    # paths the author's case never takes (tests/broken_ops/contract_breakers_op.py)
    "broken_dg_tanh": {"double_grad"},       # tanh'' term without its factor 2
    "broken_dg_sigmoid": {"double_grad"},    # double grad gives no gradient of Out
    "broken_dg_mul": {"double_grad"},        # X*Y double grad's cross terms swapped
    "broken_var_mean": {"grad_outputs"},     # Mean@GRAD ignored (the test names Var)
    "broken_split_pair": {"grad_outputs"},   # Second's gradient halved (the test names First)
    "broken_scaled_norm": {"grad_outputs"},  # the grad maker takes no Norm@GRAD at all
    "broken_normal": {"distribution"},       # std used as the variance (the case has std 1)
    "broken_normal_f32": {"distribution"},   # the float32 kernel squares std (case: float64)
    "broken_uniform": {"distribution"},      # min + r * max (the case has min 0)
    "broken_dropout_keep": {"distribution"},   # p used as the keep probability (p 0.5)
    "broken_dropout_scale": {"distribution"},  # kept values scaled by 1/p (p 0.5)
    # the execution modes (tests/broken_ops/mode_breakers_op.py)
    "broken_inplace_sigmoid": {"inplace"},   # grad reads X, overwritten by the in-place forward
    "broken_inplace_axpy": {"inplace"},      # in place with X and Y one variable
    "broken_undeclared_exp": {"declared_inputs"},   # grad fetches the forward's Out by name
    "broken_nnb_fill": {"declared_inputs"},  # forward reads a no_need_buffer input's data
    "broken_scratch_softmax": {"concurrency"},      # a module-level scratch buffer
    "broken_sparse_sgd": {"sparse"},         # one update per duplicate row lost
    "broken_reuse_scale": {"plan"},          # writes into the output it handed out last run
    # derived cases of issue 45 point 5 (tests/broken_ops/derivation_breakers_op.py)
    "broken_rowsum_div": {"empty"},          # divides by the last dim's size (cut to 0)
    "broken_naive_norm": {"extremal"},       # squares overflow (spread magnitudes)
    "broken_sq_ratio": {"extremal"},         # inf / inf at the largest finite value
    "broken_prod_rows": {"kinks"},           # grad Out / X: NaN where X holds a zero
    "broken_axis_cumsum": {"explore"},       # 0-D input with axis 0 (axis adapted)
    "broken_two_causes": {"explore"},        # a refused declared value and a dropped NaN
    # float16 / bfloat16 (tests/broken_ops/low_precision_breakers_op.py)
    "broken_lp_row_sum": {"precision"},      # row sums accumulated in float16 / bfloat16
    "broken_lp_row_norm": {"dtypes"},        # squares in float16: inf past |x| = 256
    "broken_lp_scale": {"precision"},        # bfloat16 by truncation, not round-to-nearest-even
    "broken_lp_twin": {"dtypes"},            # grad kernel for float16 only, not bfloat16
    # the laws every op obeys (issue 36; tests/broken_ops/law_breakers_op.py)
    "broken_law_argmax": {"describe"},       # Out int64, the program says float32
    "broken_law_bias": {"every_grad"},       # dBias wrong, the test checks X only
    "broken_law_mask": {"every_grad", "honest_error"},   # wrong without the dispensable Indices
    "broken_law_mode": {"refusals"},         # unknown reduction silently "mean"
    "broken_law_fill": {"refusals"},         # int64 fill value through float
    "broken_law_pool": {"coincidences", "honest_error"},  # W loop bounded by H (the test H == W)
    "broken_law_perm": {"trace"},            # reseeds numpy's global generator
}
FUZZ_ONLY = {op for op, checks in EXPECTED.items() if checks == {"fuzz"}}
EXPLORE_ONLY = {op for op, checks in EXPECTED.items() if checks == {"explore"}}


MAIN = "import sys; from opkit.cli.main import main; sys.exit(main())"


def opkit(*args, timeout=1800):
    env = dict(os.environ, NO_COLOR="1", OPKIT_NO_GPU=os.environ.get("OPKIT_NO_GPU", ""))
    return subprocess.run([sys.executable, "-c", MAIN, "test", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env=env)


def needs_optest():
    pytest.importorskip("harness.optest.op_test", reason="harness.optest.op_test (OpTest) is not written yet")


# -- usage errors (exit 2) -----------------------------------------------------------------
def test_unknown_op_is_usage_error():
    p = opkit("no_such_op_xyz")
    assert p.returncode == 2 and "no_such_op_xyz" in p.stderr and p.stdout == ""


def test_bad_shard_and_checks_are_usage_errors():
    assert opkit("--all", "--shard", "3/2").returncode == 2
    p = opkit("clip", "--checks", "bogus")
    assert p.returncode == 2 and "bogus" in p.stderr


def test_op_without_optest_is_usage_error(tmp_path):
    p = opkit("clip", "--tests", str(tmp_path))
    assert p.returncode == 2 and "no OpTest found for op 'clip'" in p.stderr


def test_shard_splits_ops():
    from opkit.cli.test import shard

    ops = [f"op{i}" for i in range(7)]
    parts = [shard(ops, (k, 3)) for k in (1, 2, 3)]
    assert sorted(sum(parts, [])) == sorted(ops)
    assert all(not set(a) & set(b) for a in parts for b in parts if a is not b)


# -- isolation: raise, hang, crash are failed checks, the run goes on ----------------------
@pytest.mark.parametrize("op_type, expect", [
    ("fixture_raise", "kernel exploded"),
    ("fixture_hang", "timed out"),
    ("fixture_crash", "crashed"),
])
def test_isolation(broken_ops, op_type, expect):
    from harness.backend.case import Case
    from harness.executing.pool import Task, can_fork as _can_fork, run_tasks

    if op_type != "fixture_raise" and not _can_fork():
        pytest.skip("this process holds a CUDA context, so cases cannot run in forked "
                    "workers: a crash or hang here would take the test process down")

    case = Case(f"Test_{op_type}", op_type, {"X": np.ones((2, 2))}, {}, {"Out": np.ones((2, 2))})
    good = Case("TestGood", "good_sign_relu", {"X": np.ones((2, 2))}, {},
                {"Out": np.ones((2, 2))})
    tasks = [Task(op_type, "case", case=case), Task("good_sign_relu", "case", case=good)]
    # 10 s per check: the hanging op never finishes; the good op's checks take well under a
    # second even on a loaded machine (the limit is what is tested, not the machine's speed)
    done = run_tasks(tasks, checks=["output", "determinism"], timeout=10, jobs=2, isolate=True)
    failed = [r for r in done[0] if r.status == "fail"]
    assert failed and any(expect in r.message for r in failed), done[0]
    assert not [r for r in done[1] if r.status == "fail"], done[1]


# -- end to end, with OpTest ---------------------------------------------------------------
def _json_run(*args):
    p = opkit("--ops", "tests/broken_ops", "--tests", "tests/broken_ops", "--format", "json",
              *args)
    assert p.returncode in (0, 1), p.stderr
    return p, json.loads(p.stdout)     # stdout holds only the JSON document


def _failed(doc):
    return {op["op"]: {c["check"] for c in op["checks"] if c["status"] == "fail"}
            for op in doc["ops"]}


def test_broken_ops_cli_json():
    needs_optest()
    p, doc = _json_run("--jobs", "2")
    assert p.returncode == 1
    failed = _failed(doc)
    for op, checks in EXPECTED.items():
        assert failed[op] and (failed[op] - {"fuzz", "explore"} or
                               op in FUZZ_ONLY | EXPLORE_ONLY) and \
            failed[op] <= checks | {"fuzz", "explore"}, \
            (op, failed[op])   # default fuzz (a generated case) and explore (a derived one)
        #                        may also find the bug
        twin = op.replace("broken_", "good_")
        assert failed[twin] == set(), (twin, failed[twin])
    for op in doc["ops"]:
        if [c["message"][:22] for c in op["checks"]] == ["no OpTest found for op"]:
            # an op of --ops with no OpTest (explore_breakers_op.py's: their OpTests are not
            # collected) fails in a run with no op names too, as under --all
            assert op["status"] == "fail" and op["op"] not in EXPECTED, op
            continue
        assert op["status"] == ("fail" if op["op"] in EXPECTED else "pass")
        for c in op["checks"]:
            assert {"check", "status", "place", "dtype", "case", "message"} <= set(c)


def test_broken_ops_python_api(broken_ops):
    needs_optest()
    from harness.selecting.discovery import discover
    from harness.executing.pool import run_ops

    by_op = discover([str(broken_ops)]).by_op()
    reports = run_ops(sorted(by_op), by_op, isolate=False)
    failed = {r.op: {c.check for c in r.results if c.status == "fail"} for r in reports}
    # in one process (isolate=False) a kernel that keeps state between calls also spoils the
    # op's later cases: its `output` may fail too (opkit test isolates cases)
    stateful = {"broken_scale_cache": {"output", "indistinguishable"}}
    for op, checks in EXPECTED.items():
        assert failed[op.replace("broken_", "good_")] == set()
        if op in FUZZ_ONLY:      # run_ops fuzzes only when asked (fuzz=N)
            continue
        assert failed[op] and failed[op] <= checks | stateful.get(op, set()) | {"explore"}, \
            (op, failed[op])


def test_clip_table_text():
    needs_optest()
    p = opkit("clip", "-v")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "clip: PASS" in p.stdout and "determinism" in p.stdout and "seed" in p.stderr


def test_fuzz_finds_and_shrinks_wrong_gradient():
    needs_optest()
    p, doc = _json_run("broken_sign_relu", "good_sign_relu", "--fuzz", "10",
                       "--checks", "output,fuzz")
    fuzz = {op["op"]: [c for c in op["checks"] if c["check"] == "fuzz"] for op in doc["ops"]}
    assert fuzz["good_sign_relu"] and all(c["status"] == "pass" for c in fuzz["good_sign_relu"])
    bad = [c for c in fuzz["broken_sign_relu"] if c["status"] == "fail"]
    assert bad and "class TestBrokenSignReluMinimal(OpTest)" in bad[0]["message"]
    code = bad[0]["message"].split("minimal case", 1)[1].split("\n", 1)[1]
    compile(code, "<fuzz>", "exec")   # ready to paste
