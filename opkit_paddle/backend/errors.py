"""Paddle's errors as opkit's: the refusal-or-failure decision of harness.backend.seam decides by
type, so a Paddle enforce error is re-raised as the opkit error of the same kind.

Paddle raises its C++ `PADDLE_ENFORCE` errors as Python exceptions (ValueError,
RuntimeError, IndexError, NotImplementedError, ...) whose message carries the kind:
`(InvalidArgument) ...` at compile time, `InvalidArgumentError: ...` at run time, and
`Unimplemented error. ...` from the enforce of Paddle's `common` library (a DDim index out
of range: mul's negative `x_num_col_dims`, raised as a bare RuntimeError); that library's
kind-less `PD_THROW` on a value it cannot parse ("Unknown data layout type string: NCWH",
batch_norm's `data_layout`) is read as InvalidArgument. A typed
Paddle error on bad input is the op refusing it (opkit's InvalidArgument, OutOfRange, ...);
`Fatal`, `External`, `ResourceExhausted` and any exception without a Paddle kind (a Python
error inside Paddle's own code, a segfault turned into SystemError) are failures
(opkit's External).
"""
from __future__ import annotations

import re

from opkit.framework import errors

__all__ = ["REFUSALS", "paddle_kind", "as_opkit_error", "short_message"]

# Paddle's error kinds that mean "this input/attr is not accepted" -> opkit's class
REFUSALS = {
    "InvalidArgument": errors.InvalidArgument,
    "OutOfRange": errors.OutOfRange,
    "NotFound": errors.NotFound,
    "AlreadyExists": errors.AlreadyExists,
    "PreconditionNotMet": errors.PreconditionNotMet,
    "Unimplemented": errors.Unimplemented,
    "Unavailable": errors.Unavailable,
    "PermissionDenied": errors.PermissionDenied,
}
_KINDS = "|".join(list(REFUSALS) + ["Fatal", "External", "ResourceExhausted",
                                     "ExecutionTimeout"])
_KIND = re.compile(rf"(?:\(({_KINDS})\)|\b({_KINDS})Error:|^({_KINDS}) error\.)", re.M)


# `PD_THROW` in Paddle's `common` library checks a value it parses and names it, with no
# error kind: "Unknown data layout type string: NCWH.  [/paddle/paddle/common/layout.h:103]"
_COMMON_CHECK = re.compile(r"^Unknown .*\n\s*\[/paddle/paddle/common/[\w/]+\.h:\d+\]\s*$", re.S)


def paddle_kind(exc: BaseException) -> str | None:
    """The Paddle error kind named in the exception's message, or None."""
    m = _KIND.search(str(exc))
    return next(g for g in m.groups() if g) if m else None


def short_message(exc: BaseException) -> str:
    """The Paddle message without its Python call stack and C++ hints: one line."""
    text = str(exc)
    m = _KIND.search(text)
    if m:
        text = text[m.end():]
    text = text.split("[Hint:")[0].split("\n  [")[0]
    text = " ".join(text.split())
    return text[:400] or type(exc).__name__


def as_opkit_error(exc: BaseException, op_type: str) -> errors.EnforceNotMet:
    """The opkit error standing for Paddle's `exc` (raise it `from exc`)."""
    if isinstance(exc, errors.EnforceNotMet):
        return exc
    kind = paddle_kind(exc)
    if kind is None and _COMMON_CHECK.search(str(exc)):
        kind = "InvalidArgument"    # a kind-less PD_THROW of Paddle's `common` value checks
    cls = REFUSALS.get(kind or "", errors.External)
    what = kind or type(exc).__name__
    err = cls("Paddle %s: %s", what, short_message(exc))
    return err.with_context(op_type)
