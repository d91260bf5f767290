"""The Paddle backend keeps the backend contract: harness.testing's conformance suite."""
from __future__ import annotations

import pytest

from harness.backend.dispatch import plugin
from harness.testing import run_conformance_test
from paddle_backend_helpers import paddle_missing


def test_the_paddle_backend_passes_the_conformance_suite():
    why = paddle_missing()
    if why:
        pytest.skip(why)
    run_conformance_test(plugin("paddle"))
