"""opkit's Paddle-compatibility mode: run Paddle's own OpTest files unchanged.

`activate()` puts `opkit_paddle/compat/shim` first on sys.path and imports from there
`op_test` (Paddle's OpTest helpers on opkit's OpTest) and `paddle` (a minimal CPU-only facade:
capability probes, places, dtype numbers; the rest of Paddle's Python API skips the test
using it). Nothing of this is importable outside the mode. Entry points:

    opkit test --paddle --tests DIR          (or a file)
    pytest --opkit-paddle DIR/test_x.py

The environment variable OPKIT_PADDLE=1 (set by activate) turns the mode on in worker
processes (pytest-xdist, `opkit test --jobs`).

With the Paddle backend (`activate(backend="paddle")`: `opkit test --paddle --backend
paddle`, `pytest --opkit-paddle --opkit-backend paddle`) the test files' `paddle` is the
real PaddlePaddle (loaded first, in its legacy static graph, opkit_paddle.backend.env):
their references, places and static/dygraph switches are Paddle's own, and only the
modules beside Paddle's tests (`op_test`, `eager_op_test`, `testsuite`, `op`, ...) are
opkit's, so every OpTest check runs the op on Paddle's kernel (harness.backend.seam.make with the
backend "paddle"). `paddle.fluid` (Fluid 1.8's name) is then Paddle's `paddle.base`.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import numpy as np

from harness.options import compat_env, set_flag

__all__ = ["SHIM_DIR", "activate", "deactivate", "is_active", "is_paddle_harness_file", "ENV",
           "STRICT_DTYPE_ENV",
           "real_paddle_active"]

SHIM_DIR = Path(__file__).resolve().parent / "shim"
ENV = compat_env("paddle")                    # OPKIT_PADDLE: the mode is on (children)
#: the mode without its dtype leniency (docs/paddle.md)
STRICT_DTYPE_ENV = "OPKIT_PADDLE_STRICT_DTYPE"
#: the modules the shim provides in place of Paddle's (its `paddle` facade and the helper
#: modules beside Paddle's test files, which the test files import by their bare names)
_MODULES = ("op_test", "paddle", "op", "gradient_checker", "decorator_helper", "utils",
            "testsuite", "eager_op_test")
#: the shim's modules other than the facade (all that the mode gives with the real Paddle)
_HELPERS = tuple(m for m in _MODULES if m != "paddle")


def _ours(module) -> bool:
    if getattr(module, "__opkit_facade__", False):
        return True
    path = getattr(module, "__file__", None) or ""
    return bool(path) and Path(path).resolve().is_relative_to(SHIM_DIR)


#: files of Paddle's own harness that sit beside its tests (op_test.py matches pytest's
#: `*_test.py`): opkit's `op_test` replaces them, they are not collected
PADDLE_HARNESS_FILES = ("op_test.py", "testsuite.py", "eager_op_test.py", "prim_op_test.py")


def is_paddle_harness_file(path) -> bool:
    return Path(str(path)).name in PADDLE_HARNESS_FILES


def is_active() -> bool:
    module = sys.modules.get("op_test")
    return module is not None and _ours(module)


def activate(backend: str = "opkit") -> None:
    """Turn the mode on in this process (idempotent). `backend="paddle"`: the test files
    get the real PaddlePaddle as `paddle` (it must be installed: the caller checks
    harness.backend.dispatch.unavailable first), the shim's helper modules beside it."""
    real = backend == "paddle"
    _REAL[0] = real
    if real:
        from opkit_paddle.backend import env as paddle_env

        paddle_env.load()     # in sys.modules before the shim's folder is on sys.path
    path = str(SHIM_DIR)
    if path in sys.path:
        sys.path.remove(path)
    sys.path.insert(0, path)
    mine = _HELPERS if real else _MODULES
    for name in list(sys.modules):
        if name.split(".")[0] in mine and not _ours(sys.modules[name]):
            del sys.modules[name]       # e.g. Paddle's own op_test.py beside the test files
    if real:
        from opkit_paddle.compat import real_paddle

        real_paddle.install()
    for name in (mine if real else ("paddle", *_MODULES)):
        importlib.import_module(name)
    _numpy1_reshape(True)
    set_flag(ENV, True)


_REAL = [False]     # activate(backend="paddle") ran (and no deactivate since)


def real_paddle_active() -> bool:
    """Whether the mode runs with the real PaddlePaddle as `paddle` (the Paddle backend)."""
    return _REAL[0] and is_active()


_REAL_RESHAPE = None


def _numpy1_reshape(on: bool) -> None:
    """Paddle's test files were written for numpy 1.x: `np.reshape(a, newshape=...)`, a
    keyword numpy 2.4 removed, raised TypeError in their setUp. In the mode, np.reshape also
    takes `newshape` (the same as `shape`); off again with the mode."""
    global _REAL_RESHAPE


    if on:
        if _REAL_RESHAPE is not None or \
                "newshape" in inspect.signature(np.reshape).parameters:
            return
        real = _REAL_RESHAPE = np.reshape

        def reshape(a, *args, newshape=None, **kwargs):
            if newshape is not None and not args and "shape" not in kwargs:
                args = (newshape,)
            return real(a, *args, **kwargs)

        reshape.__doc__ = real.__doc__
        np.reshape = reshape
    elif _REAL_RESHAPE is not None:
        np.reshape, _REAL_RESHAPE = _REAL_RESHAPE, None


def deactivate() -> None:
    """Turn the mode off (tests): the shim leaves sys.path and sys.modules."""
    path = str(SHIM_DIR)
    while path in sys.path:
        sys.path.remove(path)
    for name in list(sys.modules):
        if name.split(".")[0] in _MODULES and _ours(sys.modules[name]):
            del sys.modules[name]
    _numpy1_reshape(False)
    sys.meta_path[:] = [f for f in sys.meta_path    # the facade's paddle.* submodule finder
                        if type(f).__module__ != "paddle._facade"]
    from opkit_paddle.compat import real_paddle

    real_paddle.uninstall()
    _REAL[0] = False
    set_flag(ENV, False)
