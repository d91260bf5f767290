"""Loading PaddlePaddle for the Paddle backend: the legacy static graph, once per process.

`load()` sets `FLAGS_enable_pir_api=0` before the first `import paddle` (the old
ProgramDesc graph runs op types by name; the PIR graph does not) and
`FLAGS_new_executor_serial_run=1` (ops run in the calling thread), calls
`paddle.enable_static()` and returns the module. `missing()` says why Paddle cannot be
used (None: it can) without raising. Op protos and CPU kernel dtypes are read from Paddle's
own registries and cached.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import re
import sys
import threading
import warnings

from opkit_paddle.backend import callstack as paddle_callstack

__all__ = ["PACKAGE", "EXTRA", "MIN_VERSION", "missing", "load", "proto", "has_op",
           "cpu_kernel_dtypes", "listed", "install_hint", "quiet_stdout"]

PACKAGE = "paddlepaddle"
EXTRA = "opkit-dl[paddle]"
MIN_VERSION = (3, 0)


def install_hint() -> str:
    return (f"install it with: pip install {PACKAGE} (or opkit's extra {EXTRA}: "
            f"pip install -e '.[paddle]' in a clone of opkit)")


@functools.lru_cache(maxsize=1)
def missing() -> str | None:
    """Why the Paddle backend cannot run here, or None."""
    if importlib.util.find_spec("paddle") is None:
        return f"the Paddle backend needs the package '{PACKAGE}', which is not installed: " \
               f"{install_hint()}"
    try:
        paddle = load()
    except Exception as exc:  # noqa: BLE001 - a broken install is a reason, not a crash
        return f"'{PACKAGE}' is installed but does not import ({type(exc).__name__}: {exc})"
    version = tuple(int(p) for p in re.findall(r"\d+", paddle.__version__)[:2] or [0, 0])
    if version != (0, 0) and version < MIN_VERSION:   # (0, 0): a develop build
        return f"the Paddle backend needs {PACKAGE} >= 3.0, found {paddle.__version__}"
    return None


@functools.lru_cache(maxsize=1)
def load():
    """The `paddle` module, in the legacy static-graph mode."""
    os.environ["FLAGS_enable_pir_api"] = "0"
    os.environ.setdefault("GLOG_minloglevel", "2")     # no "New Executor is Running" lines
    # the executor runs a program's ops in the calling thread, not through its work queue:
    # the same kernels; a one-op program has nothing to overlap, and each run (two per
    # case) saved the queue's thread hand-offs (benchmarks/paddle_backend.py: relu 167 ->
    # 92 us per case on a loaded 2-core machine). A user's own setting is kept.
    os.environ.setdefault("FLAGS_new_executor_serial_run", "1")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import paddle
    paddle.enable_static()
    # a kernel that crashes (SIGSEGV, SIGFPE) kills the worker process the harness runs it
    # in, which reports it as a crash; Paddle's own handler would print a C++ stack on
    # standard output instead (where `opkit test --format json` writes its document)
    from paddle.base import core

    if hasattr(core, "disable_signal_handler"):
        core.disable_signal_handler()
    # no Python call stack recorded into every op Paddle creates (opkit_paddle.backend.
    # callstack: it was most of the backend's time)
    from paddle.base import framework

    paddle_callstack.off(framework)
    return paddle


class quiet_stdout:
    """Paddle's C++ side (MKL's parameter errors, glog) writes to file descriptor 1; during a
    run it goes to standard error, so standard output holds only what opkit prints. Nested
    and concurrent runs (the `concurrency` check's threads) share one redirection: the first
    to enter makes it, the last to leave undoes it."""

    _saved = None
    _depth = 0
    _lock = threading.Lock()

    def __enter__(self):
        with quiet_stdout._lock:
            try:
                if quiet_stdout._depth == 0:
                    sys.stdout.flush()
                    if quiet_stdout._saved is None:
                        quiet_stdout._saved = os.dup(1)
                    os.dup2(2, 1)
                quiet_stdout._depth += 1
                self.ok = True
            except (OSError, ValueError, AttributeError):
                self.ok = False
        return self

    def __exit__(self, *exc):
        if self.ok:
            with quiet_stdout._lock:
                quiet_stdout._depth -= 1
                if quiet_stdout._depth == 0:
                    os.dup2(quiet_stdout._saved, 1)
        return False


@functools.lru_cache(maxsize=1)
def _protos() -> dict:
    load()
    from paddle.base import framework

    return {p.type: p for p in framework.get_all_op_protos()}


def has_op(op_type: str) -> bool:
    return op_type in _protos()


def proto(op_type: str):
    """Paddle's OpProto of `op_type` (None: Paddle has no such legacy op)."""
    return _protos().get(op_type)


@functools.lru_cache(maxsize=1)
def _kernels() -> dict:
    load()
    from paddle.base import core

    return core._get_all_register_op_kernels("all")


_DTYPES = {"float": "float32", "double": "float64"}
_LOW_PRECISION = {"::phi::dtype::float16": "float16", "::phi::dtype::bfloat16": "bfloat16"}


def listed(op_type: str) -> bool:
    """Whether Paddle's kernel registry lists kernels under this op type's own name."""
    return bool(_kernels().get(op_type))


def cpu_kernel_dtypes(op_type: str, low_precision: bool = False) -> set:
    """The float dtypes ('float32', 'float64'; with `low_precision` also 'float16',
    'bfloat16') Paddle registers a plain CPU kernel for."""
    names = {**_DTYPES, **(_LOW_PRECISION if low_precision else {})}
    found = set()
    strided_only = all("STRIDED" in k for k in _kernels().get(op_type, [])
                       if "place[Place(cpu)]" in k)
    for key in _kernels().get(op_type, []):
        if "place[Place(cpu)]" not in key or "MKLDNN" in key or "ONEDNN" in key or \
                ("STRIDED" in key and not strided_only):   # a view kernel beside the op's own
            continue
        m = re.search(r"data_type\[([^\]]+)\]", key)
        if m and m.group(1) in names:
            found.add(names[m.group(1)])
    return found
