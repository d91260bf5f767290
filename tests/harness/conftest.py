"""Fixtures of the harness tests: a scratch op registry, and the deliberately broken ops
loaded into one."""
from __future__ import annotations

import pytest

from harness_test_helpers import BROKEN, FIXTURES, load_op_files


@pytest.fixture
def ops():
    """A scratch op registry: what a test registers is gone after it."""
    from opkit.registry import scratch

    with scratch():
        yield


@pytest.fixture
def broken_ops():
    """The broken ops and their twins, registered for the test only."""
    from opkit.registry import scratch

    with scratch():
        load_op_files(BROKEN, "broken")
        load_op_files(FIXTURES, "fixtures")
        yield BROKEN
