"""Fixtures of the harness tests: the deliberately broken ops, loaded into a scratch registry."""
from __future__ import annotations

import pytest

from harness_test_helpers import BROKEN, FIXTURES, load_op_files


@pytest.fixture
def broken_ops():
    """The broken ops and their twins, registered for the test only."""
    from opkit.registry import scratch

    with scratch():
        load_op_files(BROKEN, "broken")
        load_op_files(FIXTURES, "fixtures")
        yield BROKEN
