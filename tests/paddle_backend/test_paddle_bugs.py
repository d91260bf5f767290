"""Every reproducer under examples/paddle_bugs/ runs standalone against the installed Paddle
and says whether its bug still shows (exit 1, "STILL SHOWS: ...") or is fixed (exit 0,
"FIXED: ..."). The test fails when a reproducer crashes, prints something else, or imports
opkit; it passes either way otherwise, and reports which bugs still show
(`pytest -rA tests/paddle_backend/test_paddle_bugs.py`)."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from paddle_backend_helpers import ROOT

BUGS = sorted((ROOT / "examples" / "paddle_bugs").glob("*.py"))


def test_there_are_reproducers_and_the_docs_table_names_each():
    assert len(BUGS) >= 10
    doc = (ROOT / "docs" / "paddle.md").read_text()
    for path in BUGS:
        assert f"examples/paddle_bugs/{path.name}" in doc, path.name


@pytest.mark.skipif(importlib.util.find_spec("paddle") is None,
                    reason="paddlepaddle is not installed: pip install 'opkit-dl[paddle]'")
@pytest.mark.parametrize("path", BUGS, ids=[p.stem for p in BUGS])
def test_reproducer_runs_standalone_and_reports(path):
    source = path.read_text()
    assert not re.search(r"^\s*(import|from)\s+(opkit|harness|checkers|reference_ops)\b",
                         source, re.M), "a reproducer is plain Paddle: no opkit import"
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                       timeout=1800, cwd=ROOT)
    last = (p.stdout.strip().splitlines() or [""])[-1]
    assert p.returncode in (0, 1), (p.returncode, p.stdout[-500:], p.stderr[-2000:])
    want = "STILL SHOWS: " if p.returncode == 1 else "FIXED: "
    assert last.startswith(want), (p.returncode, last)
    print(f"{path.name}: {last}")
