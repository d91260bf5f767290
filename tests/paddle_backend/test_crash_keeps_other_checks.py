"""A kernel that kills the worker on the OpTest's own case (a crash in `output`) costs that
check (and `grad`, declared by the same methods), not the class's other checks: the pool runs
them again in a fresh worker without the checks that crashed or already reported."""
from __future__ import annotations

import json
import textwrap

import pytest

from paddle_backend_helpers import run_opkit

OP_MODULE = textwrap.dedent('''
    import os

    from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator


    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "out")
            self.add_comment("Out = 2 X; the process dies judging the OpTest's own check")


    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))


    register_operator("crash_on_case", Op, Maker)


    @register_kernel("crash_on_case", dtypes=("float32", "float64"))
    def kernel(ctx):
        x = ctx.input("X")
        if os.environ.get("CRASH_ON_CASE"):     # set by the OpTest's judging_context
            os.abort()
        ctx.set_output("Out", 2 * x)
''')

TEST_FILE = textwrap.dedent('''
    import contextlib
    import os

    import numpy as np
    from harness import OpTest


    class TestCrashOnCase(OpTest):
        def setUp(self):
            self.op_type = "crash_on_case"
            x = np.linspace(0.125, 2.0, 12).reshape(3, 4)
            self.inputs = {"X": x}
            self.outputs = {"Out": 2 * x}

        @contextlib.contextmanager
        def judging_context(self):     # judging this test's own check kills the worker
            os.environ["CRASH_ON_CASE"] = "1"
            try:
                yield
            finally:
                os.environ.pop("CRASH_ON_CASE", None)

        def test_check_output(self):
            self.check_output()
''')


def test_a_crash_in_output_does_not_cost_the_other_checks(tmp_path):
    from harness.processes.forking import can_fork

    if not can_fork():
        pytest.skip("no fork here: the pool runs cases in this process")
    (tmp_path / "crash_on_case_op.py").write_text(OP_MODULE)
    (tmp_path / "test_crash_on_case.py").write_text(TEST_FILE)
    proc = run_opkit("test", "crash_on_case", "--ops", str(tmp_path / "crash_on_case_op.py"),
                     "--tests", str(tmp_path / "test_crash_on_case.py"),
                     "--checks", "output,empty,dtypes", "--format", "json",
                     env={"OPKIT_HASH_SEEDS": "0"}, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    checks = json.loads(proc.stdout)["ops"][0]["checks"]
    crashed = [c for c in checks if c["check"] == "output" and c["status"] == "fail"]
    assert crashed and "crashed (SIGABRT)" in crashed[0]["message"], checks
    assert "run again in a fresh worker" in crashed[0]["message"]
    # the checks the crash would have cost ran and judged
    by_check = {}
    for c in checks:
        by_check.setdefault(c["check"], set()).add(c["status"])
    assert by_check.get("empty") == {"pass"}, checks
    assert by_check.get("dtypes") == {"pass"}, checks
