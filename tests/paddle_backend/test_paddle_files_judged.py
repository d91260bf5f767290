"""`opkit test --paddle --backend paddle --tests FILE` on a Paddle-style test file of an op
opkit does not implement (`lerp`): the file's op types are judged without naming them, as
unittest would run the file (its skips honoured, classes without test methods not run), one
failing setUp costs only its class, the cross-process determinism check finds the classes,
and a file that judged nothing is not a pass."""
from __future__ import annotations

import json
import textwrap

import pytest

from paddle_backend_helpers import paddle_missing, run_opkit

HEAD = textwrap.dedent('''
    import unittest

    import numpy as np
    from op_test import (OpTest, copy_bits_from_float_to_uint16, get_device,
                         get_device_place, is_custom_device)

    import paddle

    assert not is_custom_device() and get_device() == "cpu"
    assert copy_bits_from_float_to_uint16(1.0) == 0x3F80
    PLACE = get_device_place()


    def lerp(x, y, w):
        return x + w * (y - x)
''')

JUDGED = HEAD + textwrap.dedent('''

    class TestLerpOp(OpTest):
        def setUp(self):
            self.op_type = "lerp"
            x = np.random.uniform(-1, 1, (3, 4)).astype("float64")
            y = np.random.uniform(-1, 1, (3, 4)).astype("float64")
            w = np.full((1,), 0.3, "float64")
            self.inputs = {"X": x, "Y": y, "Weight": w}
            self.outputs = {"Out": lerp(x, y, w)}

        def reference(self, inputs, attrs):
            return {"Out": lerp(inputs["X"], inputs["Y"], inputs["Weight"])}

        def test_check_output(self):
            self.check_output_with_place(PLACE)

        def test_check_grad(self):
            self.check_grad(["X", "Y"], "Out")


    class TestLerpBrokenSetUp(TestLerpOp):
        def setUp(self):
            self.op_type = "lerp"
            raise RuntimeError("this class cannot be set up")


    @unittest.skipIf(True, "core is not compiled with CUDA")
    class TestLerpCUDA(TestLerpOp):
        def setUp(self):
            raise RuntimeError("a skipped class is never set up")


    class TestLerpMethodSkipped(TestLerpOp):
        @unittest.skip("bfloat16 needs oneDNN")
        def test_check_output(self):
            raise AssertionError("a skipped method never runs")

        @unittest.skip("bfloat16 needs oneDNN")
        def test_check_grad(self):
            raise AssertionError("a skipped method never runs")


    class TestLerpNoTestMethods(OpTest):
        def setUp(self):
            raise RuntimeError("unittest never instantiates a class without test methods")
''')

NOTHING = HEAD + textwrap.dedent('''

    @unittest.skipIf(not paddle.is_compiled_with_cuda(), "core is not compiled with CUDA")
    class TestLerpFP16CUDA(OpTest):
        def setUp(self):
            self.op_type = "lerp"
            raise RuntimeError("a skipped class is never set up")

        def test_check_output(self):
            self.check_output()
''')


@pytest.fixture(scope="module")
def needs_paddle():
    why = paddle_missing()
    if why:
        pytest.skip(why)


def _run(path, *extra):
    return run_opkit("test", "--paddle", "--backend", "paddle", "--tests", str(path),
                     "--format", "json", *extra)


def test_the_files_op_types_are_judged_without_naming_them(needs_paddle, tmp_path):
    path = tmp_path / "test_lerp_paddle_style.py"
    path.write_text(JUDGED)
    proc = _run(path, "--checks", "output,grad,determinism,fuzz", "--fuzz", "1")
    assert proc.stdout, proc.stderr[-3000:]
    ops = {op["op"]: op for op in json.loads(proc.stdout)["ops"]}
    assert list(ops) == ["lerp"], ops
    checks = ops["lerp"]["checks"]
    text = json.dumps(checks)
    assert "out of scope" not in text
    by_case = {}
    for c in checks:
        by_case.setdefault(c.get("case", ""), []).append(c)
    # TestLerpOp ran every check on Paddle's kernel
    ran = {c["check"] for c in by_case["TestLerpOp"] if c["status"] == "pass"}
    assert {"output", "grad", "determinism"} <= ran, by_case["TestLerpOp"]
    # the cross-process determinism check found the class in the fresh interpreters
    assert "not found" not in text
    # the skipped class: skipped with unittest's reason, its setUp never run
    cuda = by_case["TestLerpCUDA"]
    assert [c["status"] for c in cuda] == ["skip"]
    assert "core is not compiled with CUDA" in cuda[0]["message"]
    assert "a skipped class is never set up" not in text
    assert all(c["status"] == "skip" for c in by_case["TestLerpMethodSkipped"])
    assert "a skipped method never runs" not in text
    # a class without test methods is not run at all
    assert "TestLerpNoTestMethods" not in text and "unittest never instantiates" not in text
    # the broken setUp fails its own class only; fuzz still fuzzed TestLerpOp
    broken = [c for c in by_case["TestLerpBrokenSetUp"] if c["status"] == "fail"]
    assert broken and "this class cannot be set up" in broken[0]["message"]
    assert "the harness failed" not in text
    fuzzed = by_case["fuzz:TestLerpOp"]
    assert fuzzed[0]["status"] == "pass", fuzzed
    assert by_case["fuzz:TestLerpBrokenSetUp"][0]["status"] == "skip"
    assert proc.returncode == 1          # the broken setUp is a failure


def test_a_file_that_judged_nothing_is_not_a_pass(needs_paddle, tmp_path):
    path = tmp_path / "test_lerp_cuda_only.py"
    path.write_text(NOTHING)
    proc = _run(path, "--checks", "output")
    assert proc.returncode == 2, proc.stdout + proc.stderr[-2000:]
    assert "judged nothing" in proc.stderr
    ops = json.loads(proc.stdout)["ops"]
    assert [op["status"] for op in ops] == ["skip"]
    assert "core is not compiled with CUDA" in json.dumps(ops)


USER_GRADS = textwrap.dedent('''
    import numpy as np
    from op_test import OpTest
    from scipy.special import erfinv


    class TestErfinvUserGrads(OpTest):
        scale = 1.0        # the expected gradient's factor: 1 right, 3 wrong

        def setUp(self):
            self.op_type = "erfinv"
            x = np.random.uniform(-0.9, 0.9, [3, 4])
            self.inputs = {"X": x}
            self.outputs = {"Out": erfinv(x)}
            self.grad_out = np.full([3, 4], 2.0)
            self.gradient = (self.scale * np.sqrt(np.pi) / 2 * np.exp(erfinv(x) ** 2)
                             * self.grad_out)

        def test_check_output(self):
            self.check_output_with_place_customized(
                lambda outs: np.testing.assert_allclose(outs[0], erfinv(self.inputs["X"])),
                paddle.CPUPlace())

        def test_check_grad(self):
            # the expected gradient is for the test's own output gradient, given bare
            self.check_grad(["X"], "Out", user_defined_grads=[self.gradient],
                            user_defined_grad_outputs=self.grad_out)


    class TestErfinvUserGradsWrong(TestErfinvUserGrads):
        scale = 3.0
''')


def test_user_defined_grads_are_judged_for_the_tests_own_output_gradient(needs_paddle,
                                                                        tmp_path):
    path = tmp_path / "test_erfinv_user_grads.py"
    path.write_text(USER_GRADS.replace("import numpy as np", "import numpy as np\nimport paddle", 1))
    proc = _run(path, "--checks", "output,grad")
    checks = json.loads(proc.stdout)["ops"][0]["checks"]
    right = {(c["check"], c["status"]) for c in checks if c["case"] == "TestErfinvUserGrads"}
    assert ("grad", "pass") in right and ("grad", "fail") not in right, checks
    assert ("output", "fail") not in right      # check_output_with_place_customized exists
    assert "AttributeError" not in json.dumps(checks)
    wrong = [c for c in checks if c["case"] == "TestErfinvUserGradsWrong" and
             c["status"] == "fail"]
    assert wrong and all(c["check"] == "grad" for c in wrong), checks
    assert "gradient of X" in wrong[0]["message"]


TEST_SETS_ITS_ATTRS = textwrap.dedent('''
    import numpy as np
    from op_test import OpTest


    class TestCumprodEachDim(OpTest):
        def setUp(self):
            self.op_type = "cumprod"
            self.x = np.random.uniform(0.5, 1.5, [2, 3]).astype("float64")
            self.inputs = {"X": self.x}
            self.attrs = {"dim": None}

        def test_check_output(self):
            for dim in (0, 1):          # Paddle's cumprod test: the method sets the attr
                self.attrs["dim"] = dim
                self.outputs = {"Out": np.cumprod(self.x, axis=dim)}
                self.check_output()
''')


def test_a_test_that_sets_its_own_attrs_is_no_kernel_editing_them(needs_paddle, tmp_path):
    path = tmp_path / "test_cumprod_each_dim.py"
    path.write_text(TEST_SETS_ITS_ATTRS)
    proc = _run(path, "--checks", "output,attrs")
    checks = json.loads(proc.stdout)["ops"][0]["checks"]
    assert "edits its attributes in place" not in json.dumps(checks), checks
    assert any(c["check"] == "attrs" and c["status"] == "pass" for c in checks), checks
