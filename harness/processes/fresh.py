"""THE fresh-interpreter protocol: call "module:function" on a JSON payload in a new Python
process where nothing of this one's state exists (`run`, or `start` in the background).
The child reads {"target", "payload", "parent"} on stdin (it dies with `parent`, the
asking process: harness.processes.forking.die_with_parent) and answers {"value"} or {"error"} on
stdout; what the function prints goes to stderr. docs/harness.md "Fresh interpreters".
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

from harness.processes.forking import die_with_parent

__all__ = ["run", "start", "child", "FreshError", "TIMEOUT"]

TIMEOUT = 120.0                 # seconds, run()'s default
_COMMAND = [sys.executable, "-c", "from harness.processes.fresh import child; child()"]


class FreshError(RuntimeError):
    """The fresh interpreter gave no answer: it could not start, timed out, died, or the
    function raised (the message says which, in one line; `raised`: the function raised)."""

    def __init__(self, message: str, raised: bool = False):
        super().__init__(message)
        self.raised = raised


def _request(target: str, payload) -> str:
    return json.dumps({"target": target, "payload": payload, "parent": os.getpid()})


def _env(hash_seed, env) -> dict:
    out = dict(os.environ, **(env or {}))
    if hash_seed is not None:
        out["PYTHONHASHSEED"] = str(hash_seed)
    return out


def start(target: str, payload=None, *, hash_seed=None, env=None,
          stderr=None) -> subprocess.Popen:
    """Start `target(payload)` in a fresh interpreter in the background (its answer is not
    read); the Popen. `stderr`: a file for the child's standard error (default: this
    process's)."""
    proc = subprocess.Popen(_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=stderr, env=_env(hash_seed, env), cwd=os.getcwd(), text=True)
    with contextlib.suppress(OSError):      # the child died at once: its exit status says so
        proc.stdin.write(_request(target, payload))
        proc.stdin.close()
    return proc


def run(target: str, payload=None, *, hash_seed=None, env=None,
        timeout: float | None = TIMEOUT):
    """`target(payload)`'s return value (JSON round trip), computed in a fresh interpreter;
    FreshError when there is none (with the child's last line of standard error)."""
    try:
        done = subprocess.run(_COMMAND, input=_request(target, payload),
                              capture_output=True, text=True, timeout=timeout,
                              env=_env(hash_seed, env), cwd=os.getcwd(), check=False)
    except subprocess.TimeoutExpired:
        raise FreshError(f"the fresh process running {target} did not finish in "
                         f"{timeout:g} s") from None
    except OSError as exc:
        raise FreshError(f"cannot start a fresh process: {exc}") from None
    lines = done.stdout.strip().splitlines()     # the answer is the last line
    got = None
    with contextlib.suppress(ValueError):
        got = json.loads(lines[-1]) if lines else None
    if isinstance(got, dict) and "value" in got:
        return got["value"]
    if isinstance(got, dict) and "error" in got:
        raise FreshError(f"{target} raised {got['error']}", raised=True)
    tail = done.stderr.strip().splitlines()
    raise FreshError(f"the fresh process running {target} exited with status "
                     f"{done.returncode}: {tail[-1] if tail else 'no output'}")


def child() -> None:
    """The fresh interpreter's side: read the request on stdin, answer on stdout."""
    answer_fd = os.dup(1)
    os.dup2(2, 1)                         # the function's prints go to standard error
    sys.stdout = sys.stderr
    request = json.loads(sys.stdin.read())
    die_with_parent(request.get("parent"))   # the child dies with the process that asked
    code = 0
    try:
        import importlib

        from harness.backend.dispatch import prepare_child

        prepare_child()                   # the run's backend (its ops) in this interpreter too
        module, _, name = request["target"].partition(":")
        value = getattr(importlib.import_module(module), name)(request.get("payload"))
        text = json.dumps({"value": value})
    except BaseException as exc:  # noqa: BLE001 - the parent reports it
        import traceback

        traceback.print_exc()             # its last line, on standard error, names it too
        text = json.dumps({"error": f"{type(exc).__name__}: {exc}".splitlines()[0]})
        code = 1
    with os.fdopen(answer_fd, "w") as out:
        out.write(text + "\n")
    sys.stderr.flush()
    os._exit(code)
