"""`concurrency` on Paddle's kernels: threads, each with its own op, scope and executor,
run Paddle's kernels at once (they release the GIL; no lockstep: they cannot be hooked).
The broken twin: the backend's run made to share a scratch buffer between calls."""
from __future__ import annotations

import threading
import time

import numpy as np

from harness.backend.case import Case


def concurrency(case):
    from harness.backend.context import CheckContext
    from harness.checks.catalog import get_check

    return get_check("concurrency")(case, CheckContext(seed=2024))


CASE = Case("softmax", "softmax", {"X": np.random.default_rng(0).normal(size=(6, 9))},
            grad_inputs=["X"])


def test_paddles_kernels_run_at_once_in_threads_and_agree(paddle_backend):
    results = concurrency(CASE)
    assert [r.status for r in results] == ["pass"], [r.message for r in results]
    assert "no lockstep" in results[0].message


def test_a_kernel_sharing_state_between_calls_fails(paddle_backend, monkeypatch):
    from opkit_paddle.backend.op import PaddlePreparedOp

    real = PaddlePreparedOp.forward
    shared: dict = {}          # one scratch buffer for every call: the bug class
    lock = threading.Lock()

    def racy(self, hooks=None):
        out = real(self, hooks)
        with lock:
            shared.update({k: np.array(v) for k, v in out.items()})
        time.sleep(0.002)      # another thread's call writes the buffer meanwhile
        return {k: shared[k] for k in out}

    monkeypatch.setattr(PaddlePreparedOp, "forward", racy)
    results = concurrency(CASE)
    assert [r.status for r in results] == ["fail"], [r.message for r in results]
    assert "threads at once" in results[0].message


def test_nested_runs_share_one_stdout_redirection():
    """Paddle's C++ output goes to stderr during a run; threads' runs overlap, so the first to
    enter redirects and the last to leave restores (not the first to leave)."""
    import os

    import pytest

    from opkit_paddle.backend.env import quiet_stdout

    def ident(fd):
        st = os.fstat(fd)
        return st.st_dev, st.st_ino

    before = ident(1)
    if before == ident(2):
        pytest.skip("standard output and error are the same file here")
    with quiet_stdout():
        with quiet_stdout():
            assert ident(1) == ident(2)
        assert ident(1) == ident(2)          # the outer run is still on
    assert ident(1) == before
