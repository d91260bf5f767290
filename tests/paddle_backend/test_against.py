"""`--against paddle`: opkit's op beside Paddle's kernel. The broken side: relu on NaN
(Paddle gives 0, the reference NaN: the oracle supports opkit); the correct twin: softmax,
where both agree on the test's case and every derived case."""
from __future__ import annotations

import importlib.util
import json

import pytest

from paddle_backend_helpers import run_opkit

# each test runs opkit in a fresh interpreter: only an installed Paddle is needed
pytestmark = pytest.mark.skipif(importlib.util.find_spec("paddle") is None,
                                reason="paddlepaddle is not installed: pip install "
                                       "'opkit-dl[paddle]'")


def against(op):
    p = run_opkit("test", op, "--against", "paddle", "--checks", "against", "--format",
                  "json")
    assert p.returncode in (0, 1), p.stderr[-2000:]
    (report,) = json.loads(p.stdout)["ops"]
    return p.returncode, report


def test_a_disagreement_names_both_values_and_the_side_the_oracle_supports():
    rc, report = against("relu")
    assert rc == 1 and report["backend"] == "opkit"
    fails = [c for c in report["checks"] if c["check"] == "against" and c["status"] == "fail"]
    assert fails
    msg = fails[0]["message"]
    assert "opkit nan" in msg and "paddle 0" in msg and "supports opkit" in msg, msg


def test_agreeing_sides_pass():
    rc, report = against("softmax")
    assert rc == 0, report
    assert {c["status"] for c in report["checks"] if c["check"] == "against"} == {"pass"}


def test_backend_paddle_report_names_the_backend():
    p = run_opkit("test", "softmax", "--backend", "paddle", "--checks", "output",
                  "--format", "json")
    assert p.returncode == 0, p.stderr[-2000:]
    (report,) = json.loads(p.stdout)["ops"]
    assert report["backend"] == "paddle" and report["status"] == "pass"
