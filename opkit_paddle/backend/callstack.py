"""Paddle's op call stacks, off for the backend's one-op programs.

Paddle's Python `Operator.__init__` records the whole Python call stack into every op it
creates (the `op_callstack` attr: `traceback.extract_stack()`, source lines included). Under
the harness the stack is deep (pytest or hypothesis, the checks, the backend), and the
backend creates ops all the time: each program it builds, and the feed and fetch ops Paddle's
executor prepends and appends for every new feed/fetch signature. That stack walk was most
of the time `opkit test batch_norm --backend paddle` spent (its fuzzing shrinks a failure
through dozens of new programs). The backend's programs never show those stacks (a kernel
error is mapped by its type, opkit_paddle.backend.errors), so `off()` makes Paddle's
framework module see an empty stack. Only `paddle.base.framework`'s own reference to the
`traceback` module is replaced; `traceback` itself is unchanged.
"""
from __future__ import annotations

import traceback
import types

__all__ = ["off", "is_off"]


def _no_stack(*args, **kwargs):
    return traceback.StackSummary()


def off(framework) -> None:
    """Paddle's `framework` module (paddle.base.framework) records no op call stacks."""
    if is_off(framework):
        return
    shim = types.ModuleType("traceback")
    shim.__dict__.update({k: v for k, v in vars(traceback).items() if not k.startswith("__")})
    shim.extract_stack = _no_stack
    shim.__opkit_no_callstack__ = True
    framework.traceback = shim


def is_off(framework) -> bool:
    return bool(getattr(getattr(framework, "traceback", None), "__opkit_no_callstack__", False))
