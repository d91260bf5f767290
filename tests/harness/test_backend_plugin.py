"""Another framework's kernels plug in through the `opkit.backends` entry-point group
(a harness.backend.contract.Backend) alone: a toy plugin installed as a plain folder with a
.dist-info (tests/harness/fixtures/toy_backend), nothing of it named in the harness.
The broken case: its relu kernel is planted wrong and the checks fail it with a wrong value;
the correct twin: the same plugin's faithful backend passes relu's checks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOY = Path(__file__).resolve().parent / "fixtures" / "toy_backend"
ROOT = Path(__file__).resolve().parents[2]


def opkit(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TOY), str(ROOT)]),
               OMP_NUM_THREADS="1")
    env.pop("OPKIT_BACKEND", None)
    return subprocess.run([sys.executable, "-m", "opkit", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=1800)


def report(backend):
    p = opkit("test", "relu", "--backend", backend, "--checks", "output,grad,empty",
              "--format", "json")
    assert p.returncode in (0, 1), p.stderr[-2000:]
    (op,) = json.loads(p.stdout)["ops"]
    return p.returncode, op


def test_a_planted_kernel_bug_of_a_plugin_backend_fails_with_the_wrong_value():
    rc, op = report("toy_leaky")
    assert rc == 1 and op["backend"] == "toy_leaky"
    fails = [c for c in op["checks"] if c["status"] == "fail"]
    assert any(c["check"] == "output" for c in fails), op["checks"]
    assert any("Out" in c["message"] and "-0.0" in c["message"] for c in fails), \
        [c["message"] for c in fails]


def test_the_faithful_twin_passes():
    rc, op = report("toy")
    assert rc == 0, [c["message"] for c in op["checks"] if c["status"] == "fail"]
    assert op["backend"] == "toy" and op["status"] == "pass"


def test_against_a_plugin_backend_names_both_sides_values():
    p = opkit("test", "relu", "--against", "toy_leaky", "--checks", "against", "--format",
              "json")
    assert p.returncode == 1, p.stderr[-2000:]
    (op,) = json.loads(p.stdout)["ops"]
    fails = [c for c in op["checks"] if c["check"] == "against" and c["status"] == "fail"]
    assert fails and all("toy_leaky -0.0" in c["message"] for c in fails), op["checks"]
    twin = opkit("test", "relu", "--against", "toy", "--checks", "against")
    assert twin.returncode == 0, twin.stdout[-2000:]


@pytest.mark.parametrize("args", [("--backend", "nope"), ("--against", "nope")])
def test_an_unknown_backend_lists_the_installed_ones(args):
    p = opkit("test", "relu", *args)
    assert p.returncode == 2
    assert "nope" in p.stderr and "toy" in p.stderr and "toy_leaky" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
