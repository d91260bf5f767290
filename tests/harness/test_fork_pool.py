"""`opkit test --jobs N`: opkit's own fork pool, the one way cases run side by side (the
pytest-xdist path was removed: measured slower). The same JSON as --jobs 1; raise, hang,
crash and a hang that ignores SIGALRM are failed checks; tasks are dispatched by kind in
one table (harness.executing.pool.KINDS)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness_test_helpers import FIXTURES, ROOT


def opkit(*args, timeout=1800, **env_vars):
    # a fixed hash seed: tests/broken_ops holds an op whose results depend on it
    env = dict(os.environ, NO_COLOR="1", PYTHONHASHSEED="0", **env_vars)
    return subprocess.run([sys.executable, "-m", "opkit", "test", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_xdist_flags_are_gone():
    for flag in ("--xdist", "--no-xdist"):
        p = opkit("relu", "--jobs", "2", flag)
        assert p.returncode == 2 and "unrecognized arguments" in p.stderr, p.stderr


def test_jobs_2_gives_the_same_json_as_jobs_1():
    args = ("--ops", "tests/broken_ops", "--tests", "tests/broken_ops", "--format", "json",
            "broken_sign_relu", "good_sign_relu", "broken_mutate_scale", "good_mutate_scale",
            "broken_scratch_softmax", "--fuzz", "2")
    one, two = opkit(*args, "--jobs", "1"), opkit(*args, "--jobs", "2")
    assert one.returncode == two.returncode == 1, two.stderr
    # every message, concurrency's racing value included (its threads take turns in a fixed
    # order), is the same
    assert json.loads(one.stdout) == json.loads(two.stdout)
    failed = {op["op"] for op in json.loads(two.stdout)["ops"] if op["status"] == "fail"}
    assert failed == {"broken_sign_relu", "broken_mutate_scale", "broken_scratch_softmax"}


ISOLATION_TESTS = '''
import numpy as np
from harness import OpTest


class TestFixtureRaise(OpTest):
    op = "fixture_raise"

    def setUp(self):
        self.op_type = self.op
        self.inputs = {"X": np.ones((2, 2))}
        self.attrs = {}
        self.outputs = {"Out": np.ones((2, 2))}

    def test_check_output(self):
        self.check_output()


class TestFixtureHang(TestFixtureRaise):
    op = "fixture_hang"


class TestFixtureCrash(TestFixtureRaise):
    op = "fixture_crash"


class TestFixtureStubborn(TestFixtureRaise):
    op = "fixture_stubborn"


class TestGoodSignRelu(TestFixtureRaise):
    op = "good_sign_relu"
'''

STUBBORN_OP = '''
"""A kernel that blocks SIGALRM and sleeps: only the pool's kill ends it."""
import signal
import time

from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator


class StubbornOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) output.")
        self.add_comment("Out = X, never")


class StubbornOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("fixture_stubborn", StubbornOp, StubbornOpMaker)


@register_kernel("fixture_stubborn")
def stubborn_kernel(ctx):
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(3600)
'''


def test_raise_hang_crash_and_a_stubborn_hang_are_failed_checks(tmp_path):
    from harness.processes.forking import can_fork

    if not can_fork():
        pytest.skip("no fork here: the pool runs cases in this process")
    (tmp_path / "test_isolation_cases.py").write_text(ISOLATION_TESTS)
    (tmp_path / "stubborn_op.py").write_text(STUBBORN_OP)
    # without the hash-seed pair of fresh interpreters: each may take its time limit (0.5 s
    # here, too short to start one) per op, and this is about the pool's workers
    p = opkit("--ops", str(FIXTURES), "--ops", "tests/broken_ops", "--ops",
              str(tmp_path / "stubborn_op.py"), "--tests",
              str(tmp_path / "test_isolation_cases.py"), "--format", "json", "--jobs", "2",
              "--timeout", "0.5", "--checks", "output,determinism", OPKIT_HASH_SEEDS="0")
    assert p.returncode == 1, p.stderr
    failed = {op["op"]: [c["message"] for c in op["checks"] if c["status"] == "fail"]
              for op in json.loads(p.stdout)["ops"]}
    assert any("kernel exploded" in m for m in failed["fixture_raise"]), failed
    assert any("timed out after 0.5s" in m for m in failed["fixture_hang"]), failed
    assert any("crashed (SIGABRT)" in m and "check 'output'" in m
               for m in failed["fixture_crash"]), failed
    assert any("(killed) while running check 'output'" in m
               for m in failed["fixture_stubborn"]), failed
    assert failed["good_sign_relu"] == []


def test_one_dispatch_table_for_task_kinds():
    from harness.backend.case import Case
    from harness.selecting.discovery import DiscoveredTest
    from harness.executing.pool import KINDS, Task

    class TestX:
        pass

    case = Case("TestMade", "relu", {}, {}, {})
    test = DiscoveredTest(TestX, "relu", "t.py")
    tasks = [Task.of_test("relu", test), Task.of_case("relu", case),
             Task.of_op_check("relu", [test], "state"), Task.of_fuzz("relu", [test])]
    assert [t.kind for t in tasks] == list(KINDS) == ["test", "case", "op", "fuzz"]
    assert [t.name for t in tasks] == ["TestX", "TestMade", "state(relu)", "fuzz(relu)"]
    assert [t.is_case for t in tasks] == [True, True, False, True]
    with pytest.raises(ValueError, match="unknown task kind 'bogus'"):
        Task("relu", "bogus")


def test_recorded_durations_are_each_ops_own_task_time_with_jobs_2(tmp_path):
    """--record-durations with several jobs: an op's duration is the sum of its own tasks'
    times (not the time between completions, which interleave); every op gets one, and no
    op's exceeds the whole run."""
    import time

    durations = tmp_path / "durations.json"
    started = time.monotonic()
    p = opkit("relu", "softmax", "scale", "--jobs", "2", "--record-durations",
              "--durations", str(durations), "--checks", "output,grad,mutation")
    whole = time.monotonic() - started
    assert p.returncode == 0, p.stderr
    assert "approximate" not in p.stderr
    got = json.loads(durations.read_text())
    got = got["durations"]
    assert {"relu", "softmax", "scale"} <= set(got), got
    assert all(0 < float(got[op]) < whole for op in ("relu", "softmax", "scale")), got
