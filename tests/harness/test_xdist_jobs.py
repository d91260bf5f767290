"""`opkit test --jobs N --xdist` through pytest-xdist (harness/xdist_runner.py): the same JSON and
exit status as opkit's own fork pool, raise/hang/crash isolation under xdist, and the fork
pool as the fallback (`--no-xdist`, xdist not importable, an xdist run that fails)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from harness_test_helpers import FIXTURES, ROOT

pytest.importorskip("xdist", reason="pytest-xdist is not installed")

# `opkit test`, counting the calls that went through xdist (XDIST_CALLS=n on stderr);
# PRELUDE runs first (to hide xdist, or break pytest.main)
MAIN = """
import sys
{prelude}
import harness.xdist_runner as runner
real, calls = runner.run_tasks_xdist, []
def counted(*args, **kwargs):
    calls.append(1)
    return real(*args, **kwargs)
runner.run_tasks_xdist = counted
from opkit.cli.main import main
code = main()
sys.stderr.write(f"XDIST_CALLS={{len(calls)}}\\n")
sys.exit(code)
"""

BROKEN = ("--ops", "tests/broken_ops", "--tests", "tests/broken_ops", "--format", "json")


def opkit(*args, prelude="", timeout=600):
    # a fixed hash seed: tests/broken_ops holds an op whose results depend on it
    # (broken_set_sum), and these tests compare the stdout of two runs
    env = dict(os.environ, NO_COLOR="1", OPKIT_NO_GPU=os.environ.get("OPKIT_NO_GPU", ""),
               PYTHONHASHSEED="0")
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-c", MAIN.format(prelude=prelude), "test", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)


def xdist_calls(p) -> int:
    line = [ln for ln in p.stderr.splitlines() if ln.startswith("XDIST_CALLS=")]
    assert line, p.stderr
    return int(line[-1].split("=")[1])


def stable(stdout: str):
    """The JSON report without `concurrency`'s results: which wrong value a race gives (and,
    for a buffer shared across calls, whether a given run shows it) differs from run to run,
    so two runs are compared on every other check."""
    doc = json.loads(stdout)
    for op in doc["ops"]:
        op["checks"] = [c for c in op["checks"] if c["check"] != "concurrency"]
    return doc


def without_counter(stderr: str) -> str:
    """stderr without the call counter and the progress lines (timing-dependent)."""
    return "\n".join(ln for ln in stderr.splitlines() if not ln.startswith("XDIST_CALLS=")
                     and not re.match(r"opkit test: \d+/\d+ .*done, \d+s$", ln))


def test_broken_ops_same_json_with_and_without_xdist():
    with_xdist = opkit(*BROKEN, "--jobs", "2", "--xdist")
    fork_pool = opkit(*BROKEN, "--jobs", "2", "--no-xdist")
    assert xdist_calls(with_xdist) == 1 and xdist_calls(fork_pool) == 0
    assert with_xdist.returncode == fork_pool.returncode == 1, with_xdist.stderr
    doc = json.loads(with_xdist.stdout)          # stdout holds only the JSON document
    assert stable(with_xdist.stdout) == stable(fork_pool.stdout)
    assert without_counter(with_xdist.stderr) == without_counter(fork_pool.stderr)
    assert "seed 2024" in with_xdist.stderr
    failed = {op["op"] for op in doc["ops"] if op["status"] == "fail"}
    assert failed and all(op.startswith("broken_") for op in failed)


def test_text_table_and_fuzz_are_the_same():
    args = ("--ops", "tests/broken_ops", "--tests", "tests/broken_ops", "broken_sign_relu",
            "good_sign_relu", "broken_mutate_scale", "--fuzz", "3", "--jobs", "2")
    with_xdist, fork_pool = opkit(*args, "--xdist"), opkit(*args, "--no-xdist")
    assert xdist_calls(with_xdist) == 1
    assert with_xdist.returncode == fork_pool.returncode == 1
    assert with_xdist.stdout == fork_pool.stdout and "broken_sign_relu: FAIL" in with_xdist.stdout


def test_jobs_1_and_no_isolate_keep_the_in_house_runner():
    p = opkit(*BROKEN, "broken_sign_relu", "good_sign_relu", "--jobs", "1")
    assert xdist_calls(p) == 0 and p.returncode == 1
    p = opkit(*BROKEN, "broken_sign_relu", "good_sign_relu", "--jobs", "2", "--no-isolate")
    assert xdist_calls(p) == 0 and p.returncode == 1


def test_fork_pool_when_xdist_is_missing():
    hide = "sys.modules['xdist'] = None; sys.modules['xdist.plugin'] = None"
    missing = opkit(*BROKEN, "--jobs", "2", "--xdist", prelude=hide)
    assert xdist_calls(missing) == 0, missing.stderr
    assert missing.returncode == 1
    assert stable(missing.stdout) == stable(opkit(*BROKEN, "--jobs", "2", "--no-xdist").stdout)


def test_fork_pool_takes_over_when_the_xdist_run_fails():
    broken = "import pytest; pytest.main = lambda *args, **kwargs: 3"
    p = opkit(*BROKEN, "--jobs", "2", "--xdist", prelude=broken)
    assert xdist_calls(p) == 1 and p.returncode == 1
    assert "pytest-xdist run failed" in p.stderr and "fork pool" in p.stderr
    assert stable(p.stdout) == stable(opkit(*BROKEN, "--jobs", "2", "--no-xdist").stdout)


# -- isolation under xdist ------------------------------------------------------------------
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


class TestGoodSignRelu(TestFixtureRaise):
    op = "good_sign_relu"
'''

STUBBORN_OP = '''
"""A kernel that blocks SIGALRM and sleeps: only a kill ends it."""
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


@pytest.fixture
def isolation_tests(tmp_path):
    path = tmp_path / "test_isolation_cases.py"
    path.write_text(ISOLATION_TESTS)
    return path


def _failures(doc):
    return {op["op"]: [c["message"] for c in op["checks"] if c["status"] == "fail"]
            for op in doc["ops"]}


def test_raise_hang_crash_are_failed_checks_under_xdist(isolation_tests):
    args = ("--ops", str(FIXTURES), "--ops", "tests/broken_ops", "--tests",
            str(isolation_tests), "--format", "json", "--jobs", "2", "--timeout", "2",
            "--checks", "output,determinism")
    p = opkit(*args, "--xdist")
    assert xdist_calls(p) == 1 and p.returncode == 1, p.stderr
    failed = _failures(json.loads(p.stdout))
    assert any("kernel exploded" in m for m in failed["fixture_raise"]), failed
    assert any("timed out after 2s" in m for m in failed["fixture_hang"]), failed
    assert any("crashed (SIGABRT)" in m and "check 'output'" in m
               for m in failed["fixture_crash"]), failed
    assert failed["good_sign_relu"] == []
    assert p.stdout == opkit(*args, "--no-xdist").stdout


WORKER_RUN = """
import json, sys
from opkit.cli.config import load_op_modules
ops = {ops!r}
load_op_modules(ops)
from harness.discovery import discover
from harness.run import plan
from harness.xdist_runner import run_tasks_xdist
by_op = discover([{tests!r}]).by_op()
tasks, _ = plan(sorted(by_op), by_op)
out = run_tasks_xdist(tasks, ["output", "determinism"], jobs=2, timeout=0.5, op_modules=ops,
                      fork_cases=False, log=sys.stderr)
print(json.dumps({{t.op: [r.message for r in out[i] if r.status == "fail"]
                  for i, t in enumerate(tasks)}}))
"""


def test_crash_and_hang_inside_an_xdist_worker(isolation_tests, tmp_path):
    """Cases run inside the worker (what happens where a worker cannot fork): xdist's
    "worker crashed" becomes a failed check naming the signal and the check; a hang that
    ignores SIGALRM is cut by the watchdog; the crashed worker is replaced, nothing is lost."""
    (tmp_path / "stubborn_op.py").write_text(STUBBORN_OP)
    with open(isolation_tests, "a") as f:
        f.write(textwrap.dedent('''

            class TestFixtureStubborn(TestFixtureRaise):
                op = "fixture_stubborn"
        '''))
    ops = [str(FIXTURES), "tests/broken_ops", str(tmp_path / "stubborn_op.py")]
    env = dict(os.environ)
    env.pop("PYTEST_XDIST_WORKER", None)
    p = subprocess.run([sys.executable, "-c", WORKER_RUN.format(ops=ops,
                                                                tests=str(isolation_tests))],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    failed = json.loads(p.stdout)
    assert any("kernel exploded" in m for m in failed["fixture_raise"]), failed
    assert any("timed out after 0.5s" in m for m in failed["fixture_hang"]), failed
    assert any("crashed (SIGABRT) (xdist worker" in m and "check 'output'" in m
               for m in failed["fixture_crash"]), failed
    assert any("(killed) while running check 'output'" in m
               for m in failed["fixture_stubborn"]), failed
    assert failed["good_sign_relu"] == []
