"""One bug, one block: a forward kernel that sorts its input in place (row_max) breaks a
dozen checks; the report gives one failure block for it, the other checks listed under it
one line each, and no nested error messages. explore's minimal case says what it is."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from harness_test_helpers import ROOT

HERE = ROOT / "tests" / "harness" / "fixtures" / "one_cause"
OPS, TESTS = HERE / "row_max_op.py", HERE / "row_max_optests.py"


def run(*args):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "opkit", "test", "row_max", "--ops", OPS,
                           "--tests", TESTS, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)


def test_explore_labels_a_case_the_reference_computes_as_one_to_compute():
    p = run("--checks", "explore")
    assert p.returncode == 1, p.stderr
    assert "where reference() computes a result" in p.stdout
    assert "a case the op must refuse" not in p.stdout
    assert "a case the op must compute" in p.stdout
