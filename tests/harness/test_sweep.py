"""Sweeps (docs/harness.md "Sweeps: --cluster and --resume"): `--resume DIR` takes over
the units a run with the same fingerprint finished and runs the others, each stored as it
finishes; `--cluster ray` runs the fork pool's tasks on Ray (a kernel that kills its
process is a `crash` row there too); the progress line counts units, failures and time
left. Ray is optional: the tests that need it skip without it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness_test_helpers import FIXTURES, ROOT
from harness.reporting.report import FAIL, PASS, CheckResult
from harness.executing.resume import UNITS_FILE, ResumeStore, resumable, task_key
from harness.executing.pool import Task

CRASH_TESTS = '''
import numpy as np
from harness import OpTest


class TestFixtureCrash(OpTest):
    def setUp(self):
        self.op_type = "fixture_crash"
        self.inputs = {"X": np.ones((2, 2))}
        self.attrs = {}
        self.outputs = {"Out": np.ones((2, 2))}

    def test_check_output(self):
        self.check_output()


class TestGoodSignRelu(TestFixtureCrash):
    def setUp(self):
        super().setUp()
        self.op_type = "good_sign_relu"
'''


def _tasks(n):
    return [Task(f"op{k}", "op", check="state") for k in range(n)]


class FakePool:
    """An executor (run_tasks' signature) that records what it ran; `die_after`: raise
    after that many tasks, as a sweep that crashes."""

    def __init__(self, die_after=None):
        self.ran, self.die_after = [], die_after

    def __call__(self, tasks, checks=None, seed=0, timeout=None, jobs=1, isolate=True,
                 fuzz=0, on_task_done=None, context_options=None, task_seconds=None,
                 results=None):
        out = {} if results is None else results
        for i, task in enumerate(tasks):
            if self.die_after is not None and len(self.ran) == self.die_after:
                raise KeyboardInterrupt("the sweep was killed")
            self.ran.append(task.op)
            status = FAIL if task.op.endswith("1") else PASS
            out[i] = [CheckResult("state", status, "CPU", "float32", task.op, f"ran {task.op}")]
            task_seconds[i] = 1.5
            on_task_done(i)
        return out


def _run(store_dir, fp, pool, tasks):
    store = ResumeStore(store_dir, fp)
    seconds, done = {}, []
    out = resumable(store, pool)(tasks, on_task_done=done.append, task_seconds=seconds)
    return out, sorted(done), seconds


def test_resume_takes_over_finished_units_and_runs_only_the_others(tmp_path):
    fp = {"commit": "abc", "paddle": "3.3.1", "seed": 1}
    first = FakePool()
    out1, done1, _ = _run(tmp_path, fp, first, _tasks(3))
    assert first.ran == ["op0", "op1", "op2"] and done1 == [0, 1, 2]
    again = FakePool()
    out2, done2, seconds = _run(tmp_path, fp, again, _tasks(4))
    assert again.ran == ["op3"]                          # only the new unit runs
    assert done2 == [0, 1, 2, 3] and seconds[1] == 1.5   # the others are reported as done
    for i in range(3):
        assert [r.to_json() for r in out2[i]] == [r.to_json() for r in out1[i]]
    assert out2[1][0].status == FAIL and out2[1][0].message == "ran op1"


def test_another_seed_commit_or_paddle_version_runs_everything_again(tmp_path):
    fp = {"commit": "abc", "paddle": "3.3.1", "seed": 1}
    _run(tmp_path, fp, FakePool(), _tasks(2))
    for changed in ({"seed": 2}, {"commit": "def"}, {"paddle": "3.2.0"}):
        pool = FakePool()
        _run(tmp_path, dict(fp, **changed), pool, _tasks(2))
        assert pool.ran == ["op0", "op1"], changed


def test_a_crashed_sweep_loses_only_the_units_in_flight(tmp_path):
    fp = {"commit": "abc", "paddle": "3.3.1", "seed": 1}
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, fp, FakePool(die_after=2), _tasks(5))
    with open(tmp_path / UNITS_FILE, "a") as f:     # a line the crash cut off
        f.write('{"fingerprint": {"commit": "abc", "pa')
    pool = FakePool()
    _, done, _ = _run(tmp_path, fp, pool, _tasks(5))
    assert pool.ran == ["op2", "op3", "op4"] and done == [0, 1, 2, 3, 4]


def test_task_keys_name_the_op_the_kind_and_the_class_file(tmp_path):
    from harness.selecting.discovery import DiscoveredTest

    class TestX:
        pass

    t = Task.of_test("relu", DiscoveredTest(TestX, "relu", str(tmp_path / "t.py")))
    assert task_key(t) == f"relu|test|{os.path.realpath(tmp_path / 't.py')}::TestX"
    assert task_key(Task("relu", "op", check="state")) == "relu|op|state"
    assert task_key(Task.of_fuzz("relu", [])) == "relu|fuzz|fuzz(relu)"


def test_the_progress_line_counts_units_failures_and_time_left():
    from opkit.cli.table import progress_line

    assert progress_line("opkit test", 5, 20, "tasks", 2, 60.0) == \
        "opkit test: 5/20 tasks done, 2 with a failure, 60s, about 3m left"
    assert progress_line("opkit test", 10, 20, "tasks", 0, 30.0).endswith(
        "10/20 tasks done, 0 with a failure, 30s, about 30s left")
    assert "left" not in progress_line("opkit test", 0, 20, "tasks", 0, 5.0)
    assert "left" not in progress_line("opkit test", 20, 20, "tasks", 3, 80.0)


def _opkit(*args, env_extra=None):
    env = dict(os.environ, NO_COLOR="1", PYTHONHASHSEED="0", OPKIT_HASH_SEEDS="0",
               OMP_NUM_THREADS="1", **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "opkit", "test", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=900, env=env)


def _crash_run(tmp_path, *extra):
    tests = tmp_path / "test_crash_cases.py"
    tests.write_text(CRASH_TESTS)
    return _opkit("--ops", str(FIXTURES), "--ops", "tests/broken_ops", "--tests", str(tests),
                  "--format", "json", "--jobs", "1", "--checks", "output", *extra)


def _failures(p):
    return {op["op"]: [c for c in op["checks"] if c["status"] == "fail"]
            for op in json.loads(p.stdout)["ops"]}


def test_resume_on_the_command_line_keeps_a_crash_row(tmp_path):
    from harness.processes.forking import can_fork

    if not can_fork():
        pytest.skip("no fork here: the pool runs cases in this process")
    first = _crash_run(tmp_path, "--resume", str(tmp_path / "state"))
    assert first.returncode == 1, first.stderr
    crash = _failures(first)["fixture_crash"]
    assert crash and crash[0]["kind"] == "crash" and "crashed (SIGABRT)" in crash[0]["message"]
    assert _failures(first)["good_sign_relu"] == []
    second = _crash_run(tmp_path, "--resume", str(tmp_path / "state"))
    assert second.returncode == 1
    assert "2 finished tasks taken over" in second.stderr, second.stderr
    assert json.loads(second.stdout)["ops"] == json.loads(first.stdout)["ops"]


def test_a_killed_worker_is_a_crash_row_on_ray(tmp_path):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'opkit-dl[ray]')")
    p = _crash_run(tmp_path, "--cluster", "ray")
    assert p.returncode == 1, p.stderr
    crash = _failures(p)["fixture_crash"]
    assert crash and crash[0]["kind"] == "crash" and "crashed (SIGABRT)" in crash[0]["message"]
    assert _failures(p)["good_sign_relu"] == []     # the sweep went on


def test_a_ray_worker_that_dies_is_a_crash_row_not_the_end_of_the_run():
    pytest.importorskip("ray", reason="ray is not installed (pip install 'opkit-dl[ray]')")
    import ray

    from harness.executing.ray_pool import ray_executor

    tasks = _tasks(3)
    done = []
    try:
        out = ray_executor("", os.abort, {}, workers=1)(tasks, on_task_done=done.append,
                                                     task_seconds={})
    finally:
        ray.shutdown()
    assert sorted(done) == [0, 1, 2]
    for i in range(3):
        assert out[i][0].status == FAIL and out[i][0].kind == "crash"
        assert "Ray worker" in out[i][0].message


def test_cluster_ray_without_ray_exits_2_naming_the_extra(tmp_path):
    (tmp_path / "ray.py").write_text("raise ImportError('no ray here')\n")
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    p = _opkit("relu", "--cluster", "ray", env_extra={"PYTHONPATH": path})
    assert p.returncode == 2, p.stderr
    assert "opkit-dl[ray]" in p.stderr and "Traceback" not in p.stderr


def test_a_bad_cluster_value_exits_2():
    p = _opkit("relu", "--cluster", "spark")
    assert p.returncode == 2 and "expected 'ray' or 'ray://HOST:PORT'" in p.stderr, p.stderr


def test_resume_into_a_file_exits_2(tmp_path):
    (tmp_path / "f").write_text("")
    p = _opkit("relu", "--resume", str(tmp_path / "f"))
    assert p.returncode == 2 and "not a folder" in p.stderr and "Traceback" not in p.stderr


def test_the_core_runs_without_ray():
    # harness.executing.ray_pool and opkit.cli.sweep import ray only when --cluster asks for it
    code = ("import sys; import harness.executing.ray_pool, harness.executing.resume, opkit.cli.sweep; "
            "assert 'ray' not in sys.modules")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
