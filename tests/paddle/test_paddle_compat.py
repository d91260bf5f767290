"""opkit's Paddle-compatibility mode (opkit_paddle.compat) and Paddle's OpTest spelling
(opkit_paddle.optest_surface)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

import numpy as np
import pytest

from harness import OpTest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURE = HERE / "fixtures" / "paddle_style_cases.py"


def _paddle_optests() -> Path | None:
    """Paddle's Fluid 1.8 OpTest files: $OPKIT_PADDLE_OPTESTS, else shared/paddle_optests/
    fluid18 beside the checkout (or beside one of its parents)."""
    env = os.environ.get("OPKIT_PADDLE_OPTESTS")
    if env:
        return Path(env) if Path(env).is_dir() else None
    for base in ROOT.parents:
        candidate = base / "shared" / "paddle_optests" / "fluid18"
        if candidate.is_dir():
            return candidate
    return None


def _env():
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("OPKIT_PADDLE", None)
    return env


def _pytest(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p",
                           "no:cacheprovider", "-q", "-rs", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd or ROOT, env=_env(),
                          timeout=1800)


def _run(test: unittest.TestCase) -> unittest.TestResult:
    result = unittest.TestResult()
    test.run(result)
    return result


# -- Paddle's spelling on opkit's OpTest (no mode needed) -----------------------------------------
class _Clip(OpTest):
    def setUp(self):
        self.op_type = "clip"
        x = np.random.uniform(-1, 1, (3, 4)).astype(getattr(self, "data_dtype", "float64"))
        x[np.abs(np.abs(x) - 0.5) < 0.02] = 0.7
        self.inputs = {"X": self.np_dtype_to_fluid_dtype(x)}
        self.attrs = {"min": -0.5, "max": 0.5}
        self.outputs = {"Out": np.clip(x, -0.5, 0.5)}

    def runTest(self):
        pass


class _HardShrink(OpTest):
    """An op with float32 / float64 kernels only (no float16 / bfloat16 ones)."""

    def setUp(self):
        self.op_type = "hard_shrink"
        x = np.random.uniform(-1, 1, (3, 4)).astype(getattr(self, "data_dtype", "float64"))
        self.inputs = {"X": x}
        self.attrs = {"threshold": 0.5}
        self.outputs = {"Out": np.where(np.abs(x) > 0.5, x, 0)}

    def runTest(self):
        pass


def test_paddle_spelled_checks_pass_and_run_opkit_checks():
    from opkit.framework.place import CPUPlace

    t = _Clip()
    t.setUp()
    results = t.check_output_with_place(CPUPlace(), atol=1e-5, check_dygraph=False)
    assert {r.place for r in results if r.status == "pass"} == {"CPU"}
    assert {r.dtype for r in results if r.status == "pass"} == {"float32", "float64"}
    results = t.check_output(check_dygraph=True, check_eager=True, check_pir=True,
                             check_prim=False, check_cinn=False, check_auto_parallel=False)
    assert results and all(r.status in ("pass", "skip") for r in results)
    results = t.check_grad_with_place(CPUPlace(), ["X"], "Out", None, 0.005, False, 0.01)
    assert any(r.status == "pass" and r.check == "grad" for r in results)


def test_check_grad_with_place_takes_paddles_positional_order():
    seen = {}

    class Spy(_Clip):
        def check_grad(self, inputs_to_check, output_names, **kwargs):
            seen.update(kwargs, inputs=inputs_to_check, outputs=output_names)

    t = Spy()
    t.setUp()
    t.check_grad_with_place("CPU", ["X"], "Out", {"Y"}, 0.001, False, 0.25)
    assert seen["numeric_grad_delta"] == 0.001
    assert seen["max_relative_error"] == 0.25
    assert seen["no_grad_set"] == {"Y"}


def test_wrong_expectation_fails_in_paddle_spelling():
    t = _Clip()
    t.setUp()
    t.outputs = {"Out": t.outputs["Out"] + 1.0}
    with pytest.raises(AssertionError, match="Out"):
        t.check_output_with_place("CPU", atol=1e-5)


def test_check_output_customized_gets_forward_outputs():
    t = _Clip()
    t.setUp()
    got = []
    t.check_output_customized(got.extend)
    assert len(got) == 1
    np.testing.assert_allclose(got[0], t.outputs["Out"])


@pytest.mark.parametrize("dtype, attr, reason", [
    ("float16", None, "float16"),
    ("uint16", None, "bfloat16"),
    ("float64", ("dtype", np.float16), "float16"),
    ("float64", ("dtype", np.uint16), "bfloat16"),
])
def test_fp16_bf16_classes_skip_with_reason(dtype, attr, reason):

    class Case(_HardShrink):
        data_dtype = dtype

        def runTest(self):
            self.check_output()

    if attr is not None:
        setattr(Case, attr[0], attr[1])
    result = _run(Case())
    assert not result.failures and not result.errors
    assert len(result.skipped) == 1 and reason in result.skipped[0][1]
    # check_grad is skipped the same way, never run in float32/float64
    Case.runTest = lambda self: self.check_grad(["X"], "Out")
    result = _run(Case())
    assert len(result.skipped) == 1 and reason in result.skipped[0][1]


def test_opkit_test_skips_every_check_of_a_float16_case():
    from harness.checks.catalog import check_names
    from harness.executing.pool import case_from_test

    class Half(_HardShrink):
        data_dtype = "float16"

    t = Half()
    t.setUp()
    skips = case_from_test(t).options["skip"]
    assert set(skips) == set(check_names())
    assert all("float16" in reason for reason in skips.values())
    t = _Clip()
    t.setUp()
    assert not (case_from_test(t).options or {}).get("skip")
    t.opkit_skip = {"empty": "mine"}
    assert case_from_test(t).options["skip"] == {"empty": "mine"}


def _bfloat16_bits(x):
    from opkit.framework.dtypes import bfloat16

    return np.asarray(x, np.float32).astype(bfloat16).view(np.uint16)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fp16_bf16_classes_run_in_their_dtype_where_the_op_has_the_kernel(dtype):
    """clip has float16 and bfloat16 kernels: Paddle's float16 class (float16 data) and
    bfloat16 class (uint16 bits, `dtype = np.uint16`) run in that dtype, output and grad."""
    class Case(_Clip):
        def setUp(self):
            super().setUp()
            if dtype == "bfloat16":
                self.dtype = np.uint16
                self.inputs = {"X": _bfloat16_bits(self.inputs["X"])}
                self.outputs = {"Out": _bfloat16_bits(self.outputs["Out"])}
            else:
                self.inputs = {"X": self.inputs["X"].astype(np.float16)}
                self.outputs = {"Out": self.outputs["Out"].astype(np.float16)}

    t = Case()
    t.setUp()
    results = t.check_output()
    assert {(r.place, r.dtype) for r in results if r.status == "pass"} == {("CPU", dtype)}
    grads = t.check_grad(["X"], "Out")
    assert {(r.place, r.dtype) for r in grads if r.status == "pass"} == {("CPU", dtype)}
    wrong = np.clip(np.asarray(t.inputs["X"]), 0, 0) if dtype == "float16" else None
    if dtype == "bfloat16":
        t.outputs = {"Out": _bfloat16_bits(np.full(t.outputs["Out"].shape, 0.25))}
    else:
        t.outputs = {"Out": wrong + np.float16(0.25)}
    with pytest.raises(AssertionError, match="Out"):
        t.check_output()


def test_only_check_prim_is_skipped_with_reason():
    class Case(_Clip):
        def runTest(self):
            self.check_grad(["X"], "Out", only_check_prim=True)

    result = _run(Case())
    assert len(result.skipped) == 1 and "prim" in result.skipped[0][1]


def test_is_float16_and_bfloat16_op():
    t = _Clip()
    t.setUp()
    assert not t.is_float16_op() and not t.is_bfloat16_op()
    t.dtype = np.float16
    assert t.is_float16_op()
    t.dtype = np.uint16
    assert t.is_bfloat16_op()


# -- the mode -------------------------------------------------------------------------------------
def test_facade_is_not_importable_outside_the_mode():
    code = ("import importlib.util, sys\n"
            "import harness, harness.optest.op_test, opkit_paddle.compat\n"
            "print(importlib.util.find_spec('op_test') is None,"
            " 'paddle' in sys.modules, 'op_test' in sys.modules)\n"
            "try:\n    import paddle\n    print(getattr(paddle, 'OPKIT_FACADE', 'real'))\n"
            "except ImportError:\n    print('no paddle')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(), cwd="/").stdout.split("\n")
    assert out[0] == "True False False"
    assert out[1] in ("no paddle", "real")     # a real paddle may be installed; never ours
    code = ("import sys\nfrom opkit_paddle import compat as paddle_compat\n"
            "paddle_compat.activate()\n"
            "import paddle, op_test\nprint(paddle.OPKIT_FACADE, paddle.fluid.core."
            "is_compiled_with_cuda())\npaddle_compat.deactivate()\n"
            "print('paddle' in sys.modules, 'op_test' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(), cwd="/")
    assert out.stdout.split("\n")[:2] == ["True False", "False False"], out.stderr


def test_paddle_style_file_in_pytest_mode():
    proc = _pytest("--opkit-paddle", FIXTURE)
    out = proc.stdout
    assert "3 failed, 5 passed, 8 skipped" in out, out[-3000:]
    assert "TestClipUserGradOutputsWrong" in out and "gradient of X: max relative error" in out
    assert "MKLDNN/oneDNN kernels (use_mkldnn=True) are Paddle-only" in out
    assert "TestClipWrongExpectation::test_check_output " in out
    assert "float16: the op has no float16 kernel in opkit" in out
    assert "ran no check" in out
    assert "paddle.fluid.layers.data is Paddle's own Python API" in out


def test_paddle_style_file_needs_the_mode():
    proc = _pytest(FIXTURE)
    assert proc.returncode != 0
    assert "No module named" in proc.stdout


def test_opkit_test_paddle_flag(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "opkit.cli.main", "test", "--paddle",
                           "--tests", str(FIXTURE), "--format", "json", "--checks",
                           "output,grad", "clip"],
                          capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=1800)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1            # TestClipWrongExpectation fails
    checks = doc["ops"][0]["checks"]
    failed = {c["case"] for c in checks if c["status"] == "fail"}
    # ... and so does the test whose own expected gradient (user_defined_grads) is wrong
    assert failed == {"TestClipWrongExpectation", "TestClipUserGradOutputsWrong"}
    assert any(c["status"] == "pass" and c["case"] == "TestClipPaddleSpelling"
               for c in checks)
    got = [c for c in checks if c["case"] == "TestClipMKLDNN"]
    assert got and all(c["status"] == "skip" and "MKLDNN" in c["message"] for c in got)
    # clip has a float16 kernel: Paddle's float16 class runs in float16
    assert any(c["status"] == "pass" and c["dtype"] == "float16" for c in checks
               if c["case"] == "TestClipFP16")


PADDLE_FILES = ["test_clip_op.py", "test_mul_op.py", "test_sequence_expand.py"]


def test_paddles_own_files_pass_unchanged():
    folder = _paddle_optests()
    if folder is None:
        pytest.skip("Paddle's Fluid 1.8 OpTest files (shared/paddle_optests/fluid18) are "
                    "not beside this checkout; set OPKIT_PADDLE_OPTESTS to run this")
    proc = _pytest("--opkit-paddle", *[folder / f for f in PADDLE_FILES])
    tail = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "failed" not in tail and " passed" in tail
    assert int(tail.split(" passed")[0].split()[-1]) >= 25


def test_opkit_test_paddle_ignores_paddles_own_harness_beside_the_tests(tmp_path):
    """Paddle's unittests folder holds its own `op_test.py` (importing `six`, paddle.fluid,
    ...): in the mode the shim stands in for it, so it is no test file that fails."""
    import shutil

    shutil.copy(FIXTURE, tmp_path / "test_paddle_style_cases.py")
    (tmp_path / "op_test.py").write_text("import a_module_nobody_has\n")
    proc = subprocess.run([sys.executable, "-m", "opkit.cli.main", "test", "--paddle",
                           "--tests", str(tmp_path), "--format", "json", "--checks",
                           "output", "--fuzz", "0"],
                          capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=1800)
    doc = json.loads(proc.stdout)
    assert doc["ops"] and not any("op_test.py" in op["op"] for op in doc["ops"]), doc
    assert "a_module_nobody_has" not in proc.stdout


REFUSING = '''
import numpy as np
from op_test import OpTest
import paddle.fluid.core as core


class TestClipRefuses(OpTest):
    def setUp(self):
        self.op_type = "clip"
        self.inputs = {"X": np.random.random((4, 5)).astype("float64")}
        self.attrs = {"min": 0.8, "max": 0.2}
        self.outputs = {"Out": self.inputs["X"]}

    def test_check_output(self):
        exception = None
        try:
            self.check_output()
        except core.EnforceNotMet as ex:
            exception = ex
        self.assertIsNotNone(exception)


class TestClipRefusesUncaught(TestClipRefuses):
    def test_check_output(self):
        self.check_output()
'''


def test_opkit_test_paddle_case_that_expects_the_op_to_refuse(tmp_path):
    """Paddle's tests that expect check_output to raise the op's EnforceNotMet (e.g. a fill
    value out of range) pass, and the other checks skip with the refusal as the reason; the
    same case whose test does not expect the error fails."""
    (tmp_path / "test_refusing.py").write_text(REFUSING)
    proc = subprocess.run([sys.executable, "-m", "opkit.cli.main", "test", "--paddle",
                           "--tests", str(tmp_path), "--format", "json", "--fuzz", "0",
                           "clip"],
                          capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=1800)
    checks = json.loads(proc.stdout)["ops"][0]["checks"]
    caught = [c for c in checks if c["case"] == "TestClipRefuses"]
    assert caught and not [c for c in caught if c["status"] == "fail"], caught
    assert any(c["check"] == "mutation" and c["status"] == "skip" and
               "refuses this case" in c["message"] for c in caught), caught
    uncaught = [c for c in checks if c["case"] == "TestClipRefusesUncaught"]
    assert any(c["check"] == "output" and c["status"] == "fail" for c in uncaught), uncaught


MATRIX = '''
import numpy as np
from op_test import OpTest


class TestSumAsMatrix(OpTest):
    def setUp(self):
        self.op_type = "reduce_sum"
        x = np.random.random((6, 4)).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {"dim": [1]}
        self.outputs = {"Out": np.asmatrix(x.sum(axis=1))}    # [1, 6]; the op gives [6]

    def test_check_output(self):
        self.check_output()


class TestSumAsWrongMatrix(TestSumAsMatrix):
    def setUp(self):
        super().setUp()
        self.outputs = {"Out": np.asmatrix(self.inputs["X"].sum(axis=1) + 1.0)}
'''


def test_opkit_test_paddle_matrix_expectation_is_compared_by_value(tmp_path):
    """np.asmatrix expectations (always 2-D) are compared as Paddle's np.allclose does: by
    value, against the op's output shape when the two broadcast; wrong values still fail."""
    (tmp_path / "test_matrix.py").write_text(MATRIX)
    proc = subprocess.run([sys.executable, "-m", "opkit.cli.main", "test", "--paddle",
                           "--tests", str(tmp_path), "--format", "json", "--fuzz", "0",
                           "--checks", "output", "reduce_sum"],
                          capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=1800)
    checks = json.loads(proc.stdout)["ops"][0]["checks"]
    status = {c["case"]: c["status"] for c in checks if c["status"] != "skip"}
    assert status == {"TestSumAsMatrix": "pass", "TestSumAsWrongMatrix": "fail"}, checks


def test_numpy1_reshape_keyword_only_in_the_mode():
    """Paddle's files call np.reshape(a, newshape=...), which numpy 2.4 removed; the mode
    accepts it, and leaves numpy as it was when it is turned off."""
    import numpy as np

    from opkit_paddle import compat as paddle_compat

    real = np.reshape
    was_active = paddle_compat.is_active()
    paddle_compat.activate()
    try:
        got = np.reshape(np.arange(6), newshape=(2, 3))
        assert got.shape == (2, 3)
        assert np.reshape(np.arange(6), (3, 2)).shape == (3, 2)
    finally:
        if not was_active:
            paddle_compat.deactivate()
    if not was_active:
        assert np.reshape is real


UNDECLARED = '''
import numpy as np
from op_test import OpTest


class TestScaleWithAStrayAttr(OpTest):
    def setUp(self):
        self.op_type = "scale"
        x = np.random.random((3, 4)).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {"scale": 2.0, "lambda": 0.5}      # scale declares no 'lambda'
        self.outputs = {"Out": x * 2.0}

    def test_check_output(self):
        self.check_output()
'''


def test_paddle_mode_drops_attrs_the_op_does_not_declare(tmp_path):
    """Paddle builds an op from its proto's attrs only, so a test's undeclared attr is
    ignored there (hard_shrink's test sets `lambda`); the mode does the same."""
    (tmp_path / "test_undeclared.py").write_text(UNDECLARED)
    proc = _pytest("--opkit-paddle", "--opkit-no-check-items", str(tmp_path), cwd=tmp_path)
    assert "1 passed" in proc.stdout, proc.stdout[-2000:]
