"""`opkit test NS::OP --backend torch` runs opkit's checks on an aten op: the core asks the
selected backend (harness.backend.dispatch) what the op declares, not opkit's registry, so the op is
found, its output and gradient are judged, and a check that needs what only opkit has skips
with the torch backend's reason."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "opkit", "test", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)


def test_an_aten_op_is_judged_by_the_checks_through_the_torch_backend():
    done = _run("aten::hardshrink", "--backend", "torch", "--tests", "opkit_torch/optests",
                "--checks", "output,grad,explore,empty,grad_outputs,sbp", "--format", "json")
    assert done.returncode in (0, 1), done.stderr[-2000:]
    (op,) = json.loads(done.stdout)["ops"]
    assert op["op"] == "aten::hardshrink"
    status = {}
    for r in op["checks"]:
        status.setdefault(r["check"], set()).add(r["status"])
    for check in ("output", "grad"):        # judged, not skipped: the op was found
        assert status[check] & {"pass", "fail"}, (check, op["checks"])
    assert "pass" in status["output"] and "pass" in status["grad"], op["checks"]
    explored = [r for r in op["checks"] if r["check"] == "explore"]
    assert explored and all(r["status"] != "skip" for r in explored), explored
    # a check that needs opkit's grad ops or declarations skips with the backend's reason
    for check in ("grad_outputs", "sbp"):
        skips = [r["message"] for r in op["checks"] if r["check"] == check]
        assert skips and all("torch" in m for m in skips), (check, skips)
