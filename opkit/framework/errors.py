"""Typed errors of opkit, in the style of Paddle's `platform::errors`.

Every error carries a non-empty, %-formatted message. While an op runs, the framework
adds the op type (and the variable, where one is involved) in front of the message.
"""
from __future__ import annotations

__all__ = [
    "EnforceNotMet", "InvalidArgument", "NotFound", "OutOfRange", "AlreadyExists",
    "ResourceExhausted", "PreconditionNotMet", "PermissionDenied", "ExecutionTimeout",
    "Unimplemented", "Unavailable", "Fatal", "External", "EmptyMessageError", "one_line",
]
# (KernelContractError and its Kernel* classes are raised by the framework itself, never by
# an op author: not in __all__, so not among the kinds `opkit lint` knows as user errors)


class EmptyMessageError(ValueError):
    """An error or enforce* call was given no message: a bug in the caller."""


def format_message(msg, args) -> str:
    if not isinstance(msg, str):
        raise EmptyMessageError(
            f"an error message must be a non-empty string, got {type(msg).__name__}")
    if not msg.strip():
        raise EmptyMessageError(
            "an error was raised with an empty message: say what went wrong and with which values")
    if args:
        try:
            return msg % args
        except (TypeError, ValueError) as exc:
            return f"{msg} (message arguments {args!r} do not fit its format: {exc})"
    return msg


class EnforceNotMet(Exception):
    """Base of every opkit error. `str(err)` is the full message, op context included."""

    kind = "EnforceNotMet"

    def __init__(self, msg: str, *args):
        self.raw_message = format_message(msg, args)
        self.op_type: str | None = None
        self.var_name: str | None = None
        super().__init__(self.raw_message)

    def with_context(self, op_type: str | None = None, var_name: str | None = None):
        """Record where the error happened; the message gets an `[operator < x > error]` prefix."""
        if op_type and self.op_type is None:
            self.op_type = op_type
        if var_name and self.var_name is None:
            self.var_name = var_name
        self.args = (str(self),)
        return self

    def __str__(self) -> str:
        prefix = ""
        if self.op_type:
            prefix = f"[operator < {self.op_type} > error] "
            if self.var_name:
                prefix = f"[operator < {self.op_type} > error, variable '{self.var_name}'] "
        elif self.var_name:
            prefix = f"[variable '{self.var_name}'] "
        return f"{prefix}{self.kind}: {self.raw_message}"


def _make(name: str, doc: str):
    cls = type(name, (EnforceNotMet,), {"__doc__": doc, "kind": name})
    globals()[name] = cls
    return cls


InvalidArgument = _make("InvalidArgument", "An argument, attribute or input is not valid.")
NotFound = _make("NotFound", "A variable, op or kernel was not found.")
OutOfRange = _make("OutOfRange", "An index or value is out of its range.")
AlreadyExists = _make("AlreadyExists", "Something was registered or created twice.")
ResourceExhausted = _make("ResourceExhausted", "Memory or another resource ran out.")
PreconditionNotMet = _make("PreconditionNotMet", "A precondition (e.g. initialization) is not met.")
PermissionDenied = _make("PermissionDenied", "An operation is not permitted.")
ExecutionTimeout = _make("ExecutionTimeout", "An operation did not finish in time.")
Unimplemented = _make("Unimplemented", "The requested feature is not implemented.")
Unavailable = _make("Unavailable", "A service or device is not available.")
Fatal = _make("Fatal", "An unrecoverable internal error.")
External = _make("External", "An error from a third-party library (numpy, cupy, ...).")


class KernelContractError(EnforceNotMet):
    """Base of the errors the framework raises when a KERNEL breaks its op's declared
    contract (an output infer_shape declared is missing, or has other dims or another dtype):
    a bug in the kernel, never the op refusing its inputs. Each concrete class is also the
    usual kind (`KernelInvalidArgument` is an `InvalidArgument`), so messages are unchanged."""


def _kernel_fault(base):
    name = "Kernel" + base.__name__
    cls = type(name, (base, KernelContractError),
               {"__doc__": f"{base.__name__} raised because a kernel broke its op's contract.",
                "kind": base.kind})
    globals()[name] = cls
    return cls


KernelInvalidArgument = _kernel_fault(InvalidArgument)
KernelPreconditionNotMet = _kernel_fault(PreconditionNotMet)


def one_line(exc: BaseException) -> str:
    """`Kind: message` on one line, the kind said once: an opkit error's `str()` already
    carries its kind (after any `[operator < x > error]` prefix), another error's does not."""
    if isinstance(exc, EnforceNotMet):
        kind, text = exc.kind, str(exc).replace(f"{exc.kind}: ", "", 1)
    else:
        kind, text = type(exc).__name__, str(exc)
    text = text.strip().splitlines()[0] if text.strip() else ""
    if text.startswith(f"{kind}: "):
        text = text[len(kind) + 2:]
    return f"{kind}: {text}" if text else kind
