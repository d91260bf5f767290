"""Under pytest-xdist the workers share check results through a folder the controller makes;
the controller removes it at the end of the run."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness_test_helpers import ROOT

pytest.importorskip("xdist")


def test_shared_results_folder_is_removed_after_an_xdist_run(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path), NO_COLOR="1", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:randomly",
                        "-p", "no:cacheprovider", "--opkit-check-items",
                        "reference_ops/tests/test_relu_op.py", "-k", "output"],
                       cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "passed" in p.stdout.splitlines()[-1], p.stdout[-2000:]
    left = [x.name for x in tmp_path.iterdir() if x.name.startswith("opkit-items-")]
    assert left == [], left
