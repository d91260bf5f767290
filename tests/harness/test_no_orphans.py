"""No process outlives the run that started it: pytest (with the opkit plugin's zygote and
its workers) and `opkit test` (its workers and the hash-seed children), killed mid-run by
SIGTERM or SIGKILL, leave nothing behind (docs/harness.md, "Child processes")."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness_test_helpers import ROOT

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="reads the process tree from /proc (Linux)")

# hang guards only: how long the run may take to reach its children, and the survivors to go
# (they go at once; the limits are for a machine under heavy load)
REACH_S = 600
GONE_S = 120

SLOW_OP = '''import time
from opkit import (OpMaker, OperatorWithKernel, register_operator, register_kernel,
                   DefaultGradOpMaker, grad_var_name)


class M(OpMaker):
    def make(self):
        self.add_input("X", "x")
        self.add_output("Out", "x, slowly")
        self.add_comment("slow_copy: Out = X, each call 0.2 s asleep")


class Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class GradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))


register_operator("slow_copy", Op, M, grad_maker=DefaultGradOpMaker)
register_operator("slow_copy_grad", GradOp)


@register_kernel("slow_copy")
def slow_copy(ctx):
    time.sleep(0.2)
    ctx.set_output("Out", ctx.input("X").copy())


@register_kernel("slow_copy_grad")
def slow_copy_grad(ctx):
    time.sleep(0.2)
    ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")).copy())
'''

SLOW_TEST = '''import numpy as np
from harness import OpTest


class TestSlowCopy(OpTest):
    def setUp(self):
        self.op_type = "slow_copy"
        x = np.random.rand(3, 2)
        self.inputs = {"X": x}
        self.outputs = {"Out": x}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")
'''

CONFTEST = '''import importlib.util
import pathlib

_path = pathlib.Path(__file__).parent / "slow_copy_op.py"
_spec = importlib.util.spec_from_file_location("slow_copy_op", _path)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
'''


def _project(root: Path) -> Path:
    (root / "slow_copy_op.py").write_text(SLOW_OP)
    (root / "test_slow_copy.py").write_text(SLOW_TEST)
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


def _stat(pid: int):
    """(ppid, session, state) of a live process, None for a gone (or zombie) one."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    state, ppid, session = fields[0], int(fields[1]), int(fields[3])
    return None if state in "ZX" else (ppid, session, state)


def _table() -> dict:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            got = _stat(int(entry))
            if got:
                out[int(entry)] = got
    return out


def _descendants(root: int, table: dict) -> dict:
    """{pid: depth below root} of root's live descendants."""
    depth, frontier = {}, [root]
    level = 0
    while frontier:
        level += 1
        frontier = [p for p, (ppid, _, _) in table.items() if ppid in frontier]
        depth.update({p: level for p in frontier})
    return depth


def _in_session(session: int) -> list:
    return sorted(p for p, (_, sid, _) in _table().items() if sid == session)


def _kill_mid_run(cmd, cwd, sig, wanted) -> tuple[list, list]:
    """Start cmd in a session of its own, wait until `wanted(descendants)` holds, send sig to
    cmd's process only; (the descendants it had, those still alive after GONE_S)."""
    env = dict(os.environ, NO_COLOR="1", OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + REACH_S
        seen: dict = {}
        while time.monotonic() < deadline and proc.poll() is None:
            seen = _descendants(proc.pid, _table())
            if wanted(seen):
                break
            time.sleep(0.1)
        assert proc.poll() is None and wanted(seen), \
            f"the run ended (status {proc.poll()}) or never reached its children: {seen}"
        os.kill(proc.pid, sig)
        proc.wait(timeout=GONE_S)
        deadline = time.monotonic() + GONE_S
        left = _in_session(proc.pid)
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = _in_session(proc.pid)
        return sorted(seen), left
    finally:
        for pid in _in_session(proc.pid):        # never leak, even when the test fails
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_killing_pytest_leaves_no_process(tmp_path, sig):
    root = _project(tmp_path)
    # the plugin's zygote (a child) running an OpTest in a worker (a grandchild)
    seen, left = _kill_mid_run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-q",
                                "test_slow_copy.py"], root, sig,
                               lambda d: any(level >= 2 for level in d.values()))
    assert seen
    assert not left, f"still alive after pytest got {sig.name}: {left} (its children were {seen})"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_killing_opkit_test_leaves_no_process(tmp_path, sig):
    root = _project(tmp_path)
    # a worker and the two fresh interpreters of the hash-seed comparison
    seen, left = _kill_mid_run([sys.executable, "-m", "opkit", "test", "--ops",
                                "slow_copy_op.py", "--tests", "test_slow_copy.py",
                                "slow_copy"], root, sig, lambda d: len(d) >= 2)
    assert seen
    assert not left, f"still alive after opkit test got {sig.name}: {left} (children {seen})"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_killing_a_per_file_measure_leaves_no_process(tmp_path, sig):
    # `python -m opkit_paddle.compat.measure --per-file`: one pytest process per file
    (tmp_path / "test_sleepy.py").write_text("import time\n\n\ndef test_sleeps():\n"
                                             "    time.sleep(600)\n")
    seen, left = _kill_mid_run([sys.executable, "-m", "opkit_paddle.compat.measure",
                                "--per-file", "test_sleepy.py"], tmp_path, sig,
                               lambda d: len(d) >= 1)
    assert seen
    assert not left, f"still alive after measure got {sig.name}: {left} (children {seen})"
