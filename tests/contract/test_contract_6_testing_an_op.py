"""The public contract, section 6. testing an op."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from contract_helpers import assert_signature


def test_6_optest_signatures():
    from harness import OpTest

    def check_output(self, atol=None, rtol=None, no_check_set=None, equal_nan=False): ...

    def check_grad(self, inputs_to_check, output_names, no_grad_set=None,
                   max_relative_error=0.005, numeric_grad_delta=0.005,
                   user_defined_grads=None): ...

    import unittest

    assert issubclass(OpTest, unittest.TestCase)
    assert_signature(OpTest.check_output, check_output)
    assert_signature(OpTest.check_grad, check_grad)


def _optest(setup, **methods):
    from harness import OpTest

    cls = type("TestContract", (OpTest,), {"setUp": setup, "runTest": lambda self: None,
                                           **methods})
    test = cls()
    test.setUp()
    return test


def _clip_setup(self, lengths=None, expected=None):
    self.op_type = "clip"
    x = np.random.RandomState(1).uniform(-1, 1, (5, 3)).astype("float64")
    x[np.abs(np.abs(x) - 0.5) < 0.02] = 0.0
    out = np.clip(x, -0.5, 0.5) if expected is None else expected
    self.inputs = {"X": x if lengths is None else (x, lengths)}
    self.attrs = {"min": -0.5, "max": 0.5}
    self.outputs = {"Out": out if lengths is None else (out, lengths)}


def test_6_check_output_and_grad_pass():
    test = _optest(_clip_setup)
    test.check_output()
    test.check_output(atol=1e-6, rtol=1e-6, no_check_set=None, equal_nan=False)
    test.check_grad(["X"], "Out")
    test.check_grad(["X"], ["Out"], no_grad_set=None, max_relative_error=0.005,
                    numeric_grad_delta=0.005, user_defined_grads=None)


def test_6_check_output_fails_on_wrong_output_and_honours_options():
    test = _optest(lambda self: _clip_setup(self, expected=np.zeros((5, 3))))
    with pytest.raises(AssertionError):
        test.check_output()
    test.check_output(no_check_set=["Out"])
    test.check_output(atol=10.0)


def test_6_check_output_equal_nan():
    def setup(self):
        self.op_type = "scale"
        x = np.array([[1.0, np.nan]])
        self.inputs = {"X": x}
        self.attrs = {"scale": 2.0}
        self.outputs = {"Out": 2 * x}

    test = _optest(setup)
    test.check_output(equal_nan=True)
    with pytest.raises(AssertionError):
        test.check_output(equal_nan=False)


def test_6_check_grad_user_defined_grads():
    test = _optest(_clip_setup)
    x = test.inputs["X"]
    right = ((x > -0.5) & (x < 0.5)).astype("float64") / x.size   # d mean(Out) / dX
    test.check_grad(["X"], "Out", user_defined_grads=[right])
    with pytest.raises(AssertionError):
        test.check_grad(["X"], "Out", user_defined_grads=[right * 3 + 1])


def test_6_lod_inputs_and_outputs():
    test = _optest(lambda self: _clip_setup(self, lengths=[[2, 0, 3]]))
    test.check_output()
    test.check_grad(["X"], "Out")
    wrong = _optest(lambda self: (_clip_setup(self, lengths=[[2, 0, 3]]),
                                  self.outputs.update(Out=(self.outputs["Out"][0],
                                                           [[1, 1, 3]]))))
    with pytest.raises(AssertionError):
        wrong.check_output()                        # the output LoD is checked too


def test_6_duplicable_inputs():
    def setup(self):
        self.op_type = "sum"
        a0 = np.random.RandomState(0).rand(2, 3)
        a1 = np.random.RandomState(1).rand(2, 3)
        self.inputs = {"X": [("x0", a0), ("x1", a1)]}
        self.outputs = {"Out": a0 + a1}

    test = _optest(setup)
    test.check_output()
    test.check_grad(["x0", "x1"], "Out")


def test_6_check_grad_no_grad_set():
    def setup(self):
        self.op_type = "elementwise_add"
        rng = np.random.RandomState(3)
        x, y = rng.rand(3, 4), rng.rand(3, 4)
        self.inputs = {"X": x, "Y": y}
        self.outputs = {"Out": x + y}

    test = _optest(setup)
    test.check_grad(["X"], "Out", no_grad_set={"Y"})
    test.check_grad(["X", "Y"], "Out")


PLAIN_PYTEST_FILE = '''
import numpy as np
from harness import OpTest

class TestClipOp(OpTest):
    def setUp(self):
        self.op_type = "clip"
        x = np.random.uniform(-1, 1, (4, 5)).astype("float64")
        x[np.abs(np.abs(x) - 0.5) < 0.02] = 0.0
        self.inputs = {"X": x}
        self.attrs = {"min": -0.5, "max": 0.5}
        self.outputs = {"Out": np.clip(x, -0.5, 0.5)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")

class TestClipOpWrong(TestClipOp):
    def setUp(self):
        super().setUp()
        self.outputs = {"Out": self.outputs["Out"] + 1}

    def test_check_grad(self):
        pass
'''


def test_6_plain_pytest_collects_optest(tmp_path):
    (tmp_path / "test_plain_clip.py").write_text(PLAIN_PYTEST_FILE)
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", "test_plain_clip.py", "--opkit-no-check-items"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert "1 failed, 3 passed" in p.stdout, p.stdout[-3000:]
    # with the plugin's per-check items (the default), the wrong class also fails opkit[output]
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", "test_plain_clip.py", "-rf"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=1800)
    assert "FAILED test_plain_clip.py::TestClipOpWrong::opkit[output]" in p.stdout, p.stdout
    assert "TestClipOp::opkit[" not in p.stdout.split("short test summary")[-1], p.stdout
