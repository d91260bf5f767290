"""Paddle's own test files on the Paddle backend: a test whose static-graph API call fails
because Paddle 3's Python API builds PIR programs while the backend keeps the legacy graph
("must be Value, but got Variable", raised inside Paddle) is skipped with that reason; any
other failure, the same words raised outside Paddle included, stays a failure."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from opkit_paddle.compat import pir_mismatch
from paddle_backend_helpers import ROOT, paddle_missing

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "paddle_mode"
FILE = FIXTURES / "paddle_style_pir_mismatch.py"


def _raise(exc):
    try:
        raise exc
    except TypeError as caught:
        return caught, caught.__traceback__


def test_no_real_paddle_means_no_skip():
    exc, tb = _raise(TypeError("tanh(): argument (position 1) must be Value, but got Variable"))
    assert pir_mismatch.reason(exc, tb, None) is None


def _run(*args) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FIXTURES), str(ROOT)]))
    env.pop("OPKIT_BACKEND", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider",
         "--opkit-paddle", "--opkit-no-check-items", "-rA", "-q", *args, str(FILE)],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env)
    found = {m.group(2): m.group(1) for m in
             re.finditer(r"^(PASSED|FAILED|SKIPPED|ERROR) \S*?::(\S+)", proc.stdout, re.M)}
    found["_skips"] = re.findall(r"^SKIPPED \[\d+\] \S+: (.*)$", proc.stdout, re.M)
    found["_out"] = proc.stdout + proc.stderr
    return found


def test_the_pir_mismatch_skips_with_its_reason_and_nothing_else_does():
    why = paddle_missing()
    if why:
        pytest.skip(why)
    got = _run("--opkit-backend", "paddle")
    out = got["_out"][-4000:]
    assert got.get("TestTanhApi::test_check_output") == "PASSED", out
    assert got.get("TestTanhApi::test_static_api_wrong_argument") == "FAILED", out
    assert got.get("TestTanhApi::test_same_words_outside_paddle") == "FAILED", out
    assert got.get("TestTanhApi::test_other_failure_while_handling") == "FAILED", out
    skips = [s for s in got["_skips"] if "builds PIR programs only" in s]
    # test_static_api and test_static_api_caught (one line each, or one line "[2]")
    assert sum(int(n) for n in re.findall(r"SKIPPED \[(\d+)\][^\n]*builds PIR programs only",
                                          got["_out"])) == 2, out
    assert "tanh()" in skips[0] and "legacy static graph" in skips[0]
    assert got.get("TestTanhApi::test_static_api") != "FAILED", out
