"""Refusal vs failure on torch: which exceptions are a torch op refusing its input on
purpose. torch's ops validate with TORCH_CHECK (RuntimeError), and raise ValueError,
IndexError (a dim out of range) or TypeError (an argument of the wrong type) with a message
naming what is wrong: a refusal. Not one: an empty message, an internal assert
("INTERNAL ASSERT FAILED": torch's own invariant broke), NotImplementedError (no kernel for
the dtype or device: the kernel is missing, the input is fine), any other type (a Python
bug in a custom op's kernel: AttributeError, KeyError, ZeroDivisionError ...). A crash
(segfault, abort) never reaches Python: the harness's process isolation reports it."""
from __future__ import annotations

__all__ = ["REFUSAL_TYPES", "refused", "refusal_message", "no_kernel"]

REFUSAL_TYPES = (RuntimeError, ValueError, IndexError, TypeError)
_NOT_REFUSALS = (NotImplementedError, RecursionError)
_INTERNAL = ("INTERNAL ASSERT FAILED", "Please report a bug to PyTorch")


def _message(exc: BaseException) -> str:
    return str(exc).strip()


def no_kernel(exc: BaseException) -> bool:
    """The op has no kernel for this dtype or device ("not implemented for 'Half'",
    "Could not run 'NS::OP' with arguments from the 'CPU' backend")."""
    text = _message(exc)
    return isinstance(exc, NotImplementedError) or "not implemented for '" in text or \
        "with arguments from the '" in text


def refused(exc: BaseException) -> bool:
    if not isinstance(exc, REFUSAL_TYPES) or isinstance(exc, _NOT_REFUSALS):
        return False
    text = _message(exc)
    return bool(text) and not any(m in text for m in _INTERNAL) and not no_kernel(exc)


def refusal_message(exc: BaseException) -> str | None:
    return _message(exc).splitlines()[0] if refused(exc) else None
