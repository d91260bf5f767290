"""`enforce*`: checks that raise a typed opkit error with a message saying what went wrong."""
from __future__ import annotations

from opkit.framework import errors
from opkit.framework.errors import EmptyMessageError, EnforceNotMet, format_message

__all__ = ["enforce", "enforce_eq", "enforce_ne", "enforce_lt", "enforce_le", "enforce_gt",
           "enforce_ge", "enforce_not_none"]


def _error(msg, args, default_cls=errors.InvalidArgument, detail: str = "") -> EnforceNotMet:
    if isinstance(msg, EnforceNotMet):
        err = msg
        if detail:
            err.raw_message = f"{err.raw_message} [{detail}]"
        return err
    err = default_cls("%s", format_message(msg, args))
    if detail:
        err.raw_message = f"{err.raw_message} [{detail}]"
    return err


def _check_message(msg) -> None:
    # Refused at every call, not only when the check fails: an empty message is a bug
    # whether or not this run happens to hit it.
    if isinstance(msg, EnforceNotMet):
        return
    if not isinstance(msg, str) or not msg.strip():
        raise EmptyMessageError(
            "enforce* needs a non-empty message (a %-format string or an opkit.errors error) "
            "that says what went wrong")


def enforce(cond, msg, *args) -> None:
    _check_message(msg)
    if not cond:
        raise _error(msg, args, errors.PreconditionNotMet)


def _compare(a, b, ok: bool, op: str, msg, args) -> None:
    _check_message(msg)
    if not ok:
        raise _error(msg, args, errors.InvalidArgument, f"expected {a!r} {op} {b!r}")


def enforce_eq(a, b, msg, *args) -> None:
    _compare(a, b, bool(a == b), "==", msg, args)


def enforce_ne(a, b, msg, *args) -> None:
    _compare(a, b, bool(a != b), "!=", msg, args)


def enforce_lt(a, b, msg, *args) -> None:
    _compare(a, b, bool(a < b), "<", msg, args)


def enforce_le(a, b, msg, *args) -> None:
    _compare(a, b, bool(a <= b), "<=", msg, args)


def enforce_gt(a, b, msg, *args) -> None:
    _compare(a, b, bool(a > b), ">", msg, args)


def enforce_ge(a, b, msg, *args) -> None:
    _compare(a, b, bool(a >= b), ">=", msg, args)


def enforce_not_none(x, msg, *args) -> None:
    _check_message(msg)
    if x is None:
        raise _error(msg, args, errors.NotFound)
