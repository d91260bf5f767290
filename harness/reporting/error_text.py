"""THE first line of an error for a one-line message: `first_line(exc)`. Never raises: an
exception with an empty (or blank) message gives its type's name, where
`str(exc).splitlines()[0]` raised IndexError and turned a kernel's error into a harness
crash."""
from __future__ import annotations

__all__ = ["first_line"]


def first_line(error) -> str:
    """The first non-blank line of `error` (an exception's message, or a text); for an
    exception with no message its type's name, for an empty text ''."""
    for line in str(error).splitlines():
        if line.strip():
            return line
    return type(error).__name__ if isinstance(error, BaseException) else ""
