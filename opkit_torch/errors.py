"""Refusal vs failure on torch: which exceptions are a torch op refusing its input on
purpose.

A refusal is raised *by torch*: a C++ kernel's TORCH_CHECK (RuntimeError, or IndexError /
ValueError / TypeError for c10's typed errors), `torch._check` in a Python custom op, torch's
own Python-level validation; its message names what is wrong. Torch raised it when the
innermost frame of the exception's traceback is torch's own code (`torch/_ops.py` for a call
into the dispatcher, `torch/__init__.py` for `torch._check`). Not a refusal:

- the same types raised by a custom op's own Python code (a KeyError, an IndexError of a
  numpy index, a RuntimeError of a torch call the kernel makes on data it built): a bug of
  the kernel;
- an empty message, an internal assert ("INTERNAL ASSERT FAILED": torch's own invariant);
- NotImplementedError, "not implemented for 'Half'", "Could not run ... with arguments from
  the 'CPU' backend", "Low precision dtypes not supported": the kernel for that dtype or
  device is missing, the input is fine;
- an exception never raised (no traceback).

A crash (segfault, abort) never reaches Python: the harness's process isolation reports it.
harness.backend.contract.OpRefused is always a refusal.
"""
from __future__ import annotations

import os

from harness.backend.contract import OpRefused

__all__ = ["REFUSAL_TYPES", "refused", "refusal_message", "no_kernel", "raised_by_torch",
           "declared_no_derivative"]

REFUSAL_TYPES = (RuntimeError, ValueError, IndexError, TypeError)
_NOT_REFUSALS = (NotImplementedError, RecursionError)
_NO_KERNEL = ("not implemented for '", "with arguments from the '",
              "dtypes not supported")
_INTERNAL = ("INTERNAL ASSERT FAILED", "Please report a bug to PyTorch")


def _message(exc: BaseException) -> str:
    return str(exc).strip()


def _torch_dir() -> str:
    from opkit_torch import env

    return os.path.dirname(os.path.abspath(env.load().__file__)) + os.sep


def raised_by_torch(exc: BaseException) -> bool:
    """The innermost frame of the exception's traceback is torch's own code."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    where = os.path.abspath(tb.tb_frame.f_code.co_filename)
    return where.startswith(_torch_dir())


def no_kernel(exc: BaseException) -> bool:
    """The op has no kernel for this dtype or device ("not implemented for 'Half'",
    "Could not run 'NS::OP' with arguments from the 'CPU' backend")."""
    text = _message(exc)
    return isinstance(exc, NotImplementedError) or any(m in text for m in _NO_KERNEL)


def refused(exc: BaseException) -> bool:
    if isinstance(exc, OpRefused):
        return True
    if not isinstance(exc, REFUSAL_TYPES) or isinstance(exc, _NOT_REFUSALS):
        return False
    text = _message(exc)
    return bool(text) and not any(m in text for m in _INTERNAL) and not no_kernel(exc) and \
        raised_by_torch(exc)


def refusal_message(exc: BaseException) -> str | None:
    return _message(exc).splitlines()[0] if refused(exc) else None


def declared_no_derivative(exc_or_text) -> bool:
    """The op's autograd says it has no derivative here, on purpose ("double backwards on
    deform_conv2d not supported": torchvision's backward ops): a declared lack, not a
    failure."""
    text = (exc_or_text if isinstance(exc_or_text, str) else _message(exc_or_text)).lower()
    return "double backward" in text and "not supported" in text
