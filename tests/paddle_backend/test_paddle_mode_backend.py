"""Paddle's own test files in the Paddle mode with the Paddle backend (`pytest --opkit-paddle
--opkit-backend paddle`, `opkit test --paddle --backend paddle`): the file's `paddle` is the
real PaddlePaddle, its OpTest's op runs on Paddle's kernel. The fixture's planted opkit
`scale` kernel (out + 1) shows whose kernel ran: Paddle's passes, opkit's fails."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paddle_backend_helpers import ROOT, paddle_missing, run_opkit

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "paddle_mode"
FILE = FIXTURES / "paddle_style_backend_case.py"  # not test_*.py: collected only when named


@pytest.fixture(scope="module")
def needs_paddle():
    why = paddle_missing()
    if why:
        pytest.skip(why)


def _pytest(*args) -> dict:
    """{node id tail: outcome} of a pytest run of the fixture with the planted kernel."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FIXTURES), str(ROOT)]))
    env.pop("OPKIT_BACKEND", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider",
         "-p", "planted_scale", "--opkit-paddle", "--opkit-no-check-items", "-rA", "-q",
         *args, str(FILE)], cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env)
    found = {}
    for m in re.finditer(r"^(PASSED|FAILED|SKIPPED|ERROR) \S*?::(\S+)", proc.stdout, re.M):
        found[m.group(2)] = m.group(1)
    for m in re.finditer(r"^SKIPPED \[\d+\] \S+: .*$", proc.stdout, re.M):
        found.setdefault("skips", []).append(m.group(0))
    assert found, proc.stdout[-3000:] + proc.stderr[-3000:]
    found["_out"] = proc.stdout
    return found


def test_the_ops_run_on_paddles_kernels(needs_paddle):
    got = _pytest("--opkit-backend", "paddle")
    assert got["TestRealPaddle::test_paddle_is_the_real_one"] == "PASSED"
    # the planted opkit kernel is wrong: these pass only because Paddle's kernel ran
    for cls in ("TestScaleOp", "TestScaleDygraphReference"):
        for method in ("test_check_output", "test_check_output_with_place",
                       "test_check_grad"):
            assert got[f"{cls}::{method}"] == "PASSED", got["_out"][-3000:]
    # an op opkit does not have runs on Paddle's kernel
    assert got["TestTanOp::test_check_output"] == "PASSED"
    assert got["TestTanOp::test_check_grad"] == "PASSED"
    # the check still judges Paddle's output
    assert got["TestScaleWrongExpectation::test_check_output"] == "FAILED"
    assert not any(k.startswith("TestScaleCUDA::") and v == "PASSED" for k, v in got.items())


def test_the_same_file_on_opkits_kernels_runs_the_planted_kernel(needs_paddle):
    """The twin: without the backend the planted (wrong) opkit kernel runs and fails; the op
    opkit lacks is out of scope."""
    got = _pytest("--opkit-backend", "opkit")
    assert got["TestScaleOp::test_check_output"] == "FAILED"
    assert got["TestScaleOp::test_check_output_with_place"] == "FAILED"
    assert "TestTanOp::test_check_output" not in got or \
        got["TestTanOp::test_check_output"] == "SKIPPED"
    assert any("out of scope: opkit has no op 'tan'" in s for s in got.get("skips", []))
    # the facade, not the real paddle: the file's own paddle API is a placeholder there
    assert got.get("TestRealPaddle::test_paddle_is_the_real_one") != "PASSED"


def test_opkit_test_paddle_backend_paddle(needs_paddle):
    """The front door: `opkit test --paddle --backend paddle --tests FILE`."""
    proc = run_opkit("test", "scale", "--paddle", "--backend", "paddle", "--tests", str(FILE),
                     "--checks", "output", "--no-isolate",
                     pre=f"sys.path.insert(0, {str(FIXTURES)!r}); import planted_scale")
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text[-3000:]      # the wrong expectation fails ...
    assert re.search(r"FAIL\s+output.*TestScaleWrongExpectation", text), text[-3000:]
    assert not re.search(r"FAIL\s+output.*TestScaleOp\b", text), text[-3000:]  # ... not the rest
