"""A kernel that never returns to Python (hung in native code, or with SIGALRM blocked, so
the check's own `--timeout` cannot interrupt it) is reported as `timeout` by the fork pool's
backstop, which holds each check (not the whole task) to about twice `--timeout`."""
from __future__ import annotations

import json
import textwrap

from harness.executing.pool import _Watch, backstop_seconds
from paddle_backend_helpers import run_opkit

OP_MODULE = textwrap.dedent('''
    import signal
    import time

    from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator


    class HangMaker(OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "out")
            self.add_comment("Out = X, after a sleep no signal interrupts")


    class HangOp(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))


    register_operator("hang_forever", HangOp, HangMaker)


    @register_kernel("hang_forever", dtypes=("float32", "float64"))
    def hang_kernel(ctx):
        # as a kernel stuck in native code: the check's SIGALRM stays pending, never handled
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(3600)
        ctx.set_output("Out", ctx.input("X"))
''')

TEST_FILE = textwrap.dedent('''
    import numpy as np
    from harness import OpTest


    class TestHangForever(OpTest):
        def setUp(self):
            self.op_type = "hang_forever"
            x = np.ones((2, 3), "float64")
            self.inputs = {"X": x}
            self.outputs = {"Out": x}

        def test_check_output(self):
            self.check_output()
''')


def test_a_kernel_that_never_returns_is_reported_as_timeout(tmp_path):
    (tmp_path / "hang_forever_op.py").write_text(OP_MODULE)
    (tmp_path / "test_hang_forever.py").write_text(TEST_FILE)
    proc = run_opkit("test", "hang_forever", "--ops", str(tmp_path / "hang_forever_op.py"),
                     "--tests", str(tmp_path / "test_hang_forever.py"), "--checks", "output",
                     "--timeout", "1", "--format", "json", timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)["ops"][0]
    timed_out = [c for c in report["checks"] if c["status"] == "fail" and
                 "timed out" in c.get("message", "")]
    assert timed_out, report
    assert "'output'" in timed_out[0]["message"]
    assert "twice the --timeout of 1s" in timed_out[0]["message"]


def test_the_backstop_holds_each_check_not_the_task():
    """The clock restarts whenever the worker starts or finishes a check: a task of many
    checks, each inside its limit, runs on; one check past the limit is killed."""
    limit = backstop_seconds(10.0)
    assert limit is not None and 20 <= limit < 30     # about twice the check's own limit
    watch = _Watch(limit, now=0.0)
    now = 0.0
    for step in range(40):                   # 40 checks of 9 s each: 360 s in all
        assert not watch.expired(f"{step}|check{step}".encode(), now)
        now += 9.0
        assert not watch.expired(f"{step}|check{step}".encode(), now)
    assert watch.expired(b"39|check39", now + limit)       # one check stuck past the limit
    assert backstop_seconds(None) is None and backstop_seconds(0) is None
    assert not _Watch(None, 0.0).expired(b"1|output", 1e9)
