"""Fixtures of the contract tests."""
from __future__ import annotations

import pytest

from opkit.registry import scratch

from contract_helpers import load_file, write_clip_project


@pytest.fixture
def clip_op(tmp_path):
    """`contract_clip` (API.md's example op) registered for the test only."""
    op_file, _ = write_clip_project(tmp_path)
    with scratch():
        load_file(op_file, "contract_clip_op_module")
        yield "contract_clip"
