"""Paddle's float16 OpTest classes of an op opkit lacks run on Paddle's own float16 CPU
kernel where Paddle has one (atan2), and still skip with the reason where it has none
(lerp: float32 / float64 CPU kernels only; diagonal: float16 only as a strided view kernel,
which the op's own run does not use)."""
from __future__ import annotations

import json
import textwrap

import pytest

from paddle_backend_helpers import paddle_missing, run_opkit

FILE = textwrap.dedent('''
    import numpy as np
    from op_test import OpTest


    class TestAtan2Fp16(OpTest):
        def setUp(self):
            self.op_type = "atan2"
            self.dtype = np.float16
            x1 = np.random.uniform(-1, -0.1, [4, 5]).astype(self.dtype)
            x2 = np.random.uniform(0.1, 1, [4, 5]).astype(self.dtype)
            self.inputs = {"X1": x1, "X2": x2}
            self.outputs = {"Out": np.arctan2(x1, x2)}

        def test_check_output(self):
            self.check_output()


    class TestLerpFp16(OpTest):
        def setUp(self):
            self.op_type = "lerp"
            self.dtype = np.float16
            x = np.random.uniform(-1, 1, [4, 5]).astype(self.dtype)
            y = np.random.uniform(-1, 1, [4, 5]).astype(self.dtype)
            w = np.full([1], 0.5, self.dtype)
            self.inputs = {"X": x, "Y": y, "Weight": w}
            self.outputs = {"Out": x + w * (y - x)}

        def test_check_output(self):
            self.check_output()


    class TestDiagonalFp16(OpTest):
        def setUp(self):
            self.op_type = "diagonal"
            x = np.random.uniform(-1, 1, [4, 5]).astype(np.float16)
            self.inputs = {"Input": x}
            self.attrs = {"offset": 0, "axis1": 0, "axis2": 1}
            self.outputs = {"Out": np.diagonal(x).copy()}

        def test_check_output(self):
            self.check_output()
''')


def test_float16_classes_run_on_paddles_float16_kernels(tmp_path):
    why = paddle_missing()
    if why:
        pytest.skip(why)
    path = tmp_path / "test_fp16_classes.py"
    path.write_text(FILE)
    proc = run_opkit("test", "--paddle", "--backend", "paddle", "--tests", str(path),
                     "--checks", "output", "--format", "json")
    ops = {op["op"]: op["checks"] for op in json.loads(proc.stdout)["ops"]}
    atan2 = [c for c in ops["atan2"] if c["check"] == "output"]
    assert {(c["status"], c["dtype"]) for c in atan2} == {("pass", "float16")}, atan2
    lerp = ops["lerp"]
    assert {c["status"] for c in lerp} == {"skip"}
    assert "no float16 kernel" in lerp[0]["message"]
    diagonal = ops["diagonal"]
    assert {c["status"] for c in diagonal} == {"skip"}, diagonal
