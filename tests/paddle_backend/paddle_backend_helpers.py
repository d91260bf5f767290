from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_opkit(*args, env=None, timeout=1800, pre: str = "pass"):
    """`opkit ARGS` in a fresh interpreter (after the Python statement `pre`)."""
    code = (f"import sys; {pre}; from opkit.cli.main import main; "
            f"sys.exit(main({[str(a) for a in args]!r}))")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout,
                          env=dict(os.environ, NO_COLOR="1", **(env or {})))


def paddle_missing() -> str | None:
    """Why the Paddle backend cannot run here (None: it can)."""
    import sys

    from opkit_paddle import compat as paddle_compat
    from opkit_paddle.backend import env as paddle_env

    if paddle_compat.is_active() or ("paddle" in sys.modules and
                                     getattr(sys.modules["paddle"], "__opkit_facade__", False)):
        return ("the Paddle-compatibility mode's `paddle` facade is active in this process "
                "(tests/paddle ran here): the real paddle cannot be imported beside it; "
                "run tests/paddle_backend in a process of its own")
    why = paddle_env.missing()
    if why is None and sys.modules.get("paddle") is not paddle_env.load():
        return ("the `paddle` in sys.modules is not the one the backend loaded (the "
                "compatibility mode's facade replaced it in this process)")
    return why
