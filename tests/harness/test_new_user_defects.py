"""The defects found when opkit was tried as a new user would (issue 22, item 6): each test
reproduces one and fails without its fix."""
from __future__ import annotations

import json
import os
import subprocess
import sys


from harness_test_helpers import ROOT

MAIN = "import sys; from opkit.cli.main import main; sys.exit(main())"


def opkit(*args, cwd=ROOT, timeout=300):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-c", MAIN, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)


SCALE_TEST = '''
import numpy as np
from harness.op_test import OpTest


class TestScaleNoAttrs(OpTest):
    def setUp(self):
        self.op_type = "scale"
        x = np.random.uniform(-1, 1, (3, 4))
        self.inputs = {"X": x}
        self.outputs = {"Out": x}

    def reference(self, inputs, attrs):
        scale, bias = attrs.get("scale", 1.0), attrs.get("bias", 0.0)
        x = inputs["X"]
        if attrs.get("bias_after_scale", True):
            return {"Out": x * scale + bias}
        return {"Out": (x + bias) * scale}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        GRAD_BODY
'''


def _scale_test(tmp_path, grad_body="self.check_grad(['X'], 'Out')"):
    path = tmp_path / "test_scale_op.py"
    path.write_text(SCALE_TEST.replace("GRAD_BODY", grad_body))
    return path


# -- 1. a test_check_grad that checks nothing is no gradient test --------------------------
def test_a_grad_test_whose_body_is_pass_is_no_gradient_test(tmp_path):
    path = _scale_test(tmp_path, "pass  # self.check_grad(['X'], 'Out')")
    got = opkit("test", "scale", "--tests", str(path), "--checks", "output,grad",
                "--format", "json", cwd=tmp_path)
    assert got.returncode == 1, got.stdout + got.stderr
    (op,) = json.loads(got.stdout)["ops"]
    grad = [c for c in op["checks"] if c["check"] == "grad" and c["status"] == "fail"]
    assert grad and "no gradient test" in grad[0]["message"], op


def test_a_grad_test_that_runs_check_grad_passes(tmp_path):
    path = _scale_test(tmp_path)
    got = opkit("test", "scale", "--tests", str(path), "--checks", "output,grad",
                "--format", "json", cwd=tmp_path)
    assert got.returncode == 0, got.stdout + got.stderr


# -- 2. an OpTest without self.attrs can be fuzzed -----------------------------------------
def test_fuzz_on_an_optest_without_attrs(tmp_path):
    path = _scale_test(tmp_path)
    got = opkit("test", "scale", "--tests", str(path), "--checks", "fuzz", "--fuzz", "5",
                "--format", "json", cwd=tmp_path)
    assert "AttributeError" not in got.stdout + got.stderr
    assert got.returncode == 0, got.stdout + got.stderr


def pytest_run(*args, cwd, timeout=300):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def test_the_pytest_plugin_gives_the_same_no_gradient_test_verdict(tmp_path):
    _scale_test(tmp_path, "pass  # self.check_grad(['X'], 'Out')")
    got = pytest_run("test_scale_op.py", "-rA", "-q", "-k", "grad", cwd=tmp_path)
    assert "no gradient test" in got.stdout, got.stdout[-3000:]
    assert got.returncode == 1
