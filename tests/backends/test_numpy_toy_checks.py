"""opkit's checks run on a third backend through the contract alone: `opkit test relu
--backend numpy_toy` (the toy's entry point: fixtures/numpy_toy on PYTHONPATH) passes, its
twin with relu's gradient planted wrong fails `grad` with the wrong value, and a check that
needs what the toy lacks skips with the toy's own reason."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TOY = Path(__file__).resolve().parent / "fixtures" / "numpy_toy"
ROOT = Path(__file__).resolve().parents[2]


def report(backend, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TOY), str(ROOT)]),
               OMP_NUM_THREADS="1")
    env.pop("OPKIT_BACKEND", None)
    p = subprocess.run([sys.executable, "-m", "opkit", "test", "relu", "--backend", backend,
                        "--format", "json", *args], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=600)
    assert p.returncode in (0, 1), p.stderr[-2000:]
    (op,) = json.loads(p.stdout)["ops"]
    return p.returncode, op


def test_relu_on_the_numpy_toy_passes_and_skips_with_the_toys_reasons():
    rc, op = report("numpy_toy")
    assert rc == 0, [c["message"] for c in op["checks"] if c["status"] == "fail"]
    by = {c["check"]: c for c in op["checks"]}
    assert by["output"]["status"] == "pass" and by["grad"]["status"] == "pass"
    assert by["mutation"]["status"] == "skip"
    assert "numpy_toy" in by["mutation"]["message"] and "hook" in by["mutation"]["message"]


def test_the_broken_twin_fails_grad_with_the_wrong_value():
    rc, op = report("numpy_toy_broken", "--checks", "output,grad")
    assert rc == 1
    fails = [c for c in op["checks"] if c["status"] == "fail"]
    assert fails and all(c["check"] == "grad" for c in fails), fails
    assert any("worst X[" in c["message"] and "numeric 0.0" in c["message"] for c in fails), fails


def test_an_entry_point_that_is_no_backend_is_a_usage_error():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TOY), str(ROOT)]),
               OMP_NUM_THREADS="1")
    env.pop("OPKIT_BACKEND", None)
    p = subprocess.run([sys.executable, "-m", "opkit", "test", "relu", "--backend",
                        "numpy_toy_not_a_backend"], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=600)
    assert p.returncode == 2, p.stderr[-2000:]
    assert "not a harness.backend.contract.Backend" in p.stderr and "Traceback" not in \
        p.stderr, p.stderr


def test_dtypes_judges_the_kernels_the_backend_lists():
    """`dtypes` reads the run's backend's kernels (Backend.kernel_places): the toy lists CPU
    float32 and float64 for relu and has no relu_grad op, so no GPU place and no grad op is
    reported (opkit's own relu has those: they are not the toy's)."""
    rc, op = report("numpy_toy", "--checks", "dtypes")
    assert rc == 0, [c["message"] for c in op["checks"] if c["status"] == "fail"]
    dtypes = [c for c in op["checks"] if c["check"] == "dtypes"]
    assert [(c["place"], c["status"]) for c in dtypes] == [("CPU", "pass")], dtypes
    assert "relu_grad" not in dtypes[0]["message"], dtypes[0]["message"]
