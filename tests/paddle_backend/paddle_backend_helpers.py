from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_opkit(*args, env=None, timeout=600, pre: str = "pass"):
    """`opkit ARGS` in a fresh interpreter (after the Python statement `pre`)."""
    code = (f"import sys; {pre}; from opkit.cli.main import main; "
            f"sys.exit(main({[str(a) for a in args]!r}))")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout,
                          env=dict(os.environ, NO_COLOR="1", **(env or {})))


def paddle_missing() -> str | None:
    """Why the Paddle backend cannot run here (None: it can)."""
    from harness.backends import paddle_env

    return paddle_env.missing()
