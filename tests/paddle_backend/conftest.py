"""The Paddle backend's tests: they need PaddlePaddle (pip install 'opkit-dl[paddle]'); without
it each skips with that reason (test_missing_paddle.py runs either way)."""
from __future__ import annotations

import pytest

from paddle_backend_helpers import paddle_missing


@pytest.fixture
def paddle_backend():
    """The run's options with --backend paddle (skips without Paddle)."""
    why = paddle_missing()
    if why:
        pytest.skip(why)
    from harness.options import Options, using

    with using(Options(backend="paddle", hash_seeds=False)):
        yield
