"""Check results and where they go: the unit every check produces and the report prints, and
the failure kinds (`Failure` subclasses; `CheckResult.kind` holds the kind)."""
from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from enum import StrEnum


# -- failure kinds (types, not messages) ------------------------------------------------------
class Failure(Exception):
    """A check's finding; the subclass is the kind."""

    kind = "failure"


def _kind(name: str, kind: str, doc: str = "") -> type:
    return type(name, (Failure,), {"kind": kind, "__doc__": doc or None})


KernelRaised = _kind("KernelRaised", "kernel-raised")
RawException = _kind("RawException", "raw-exception",
                     "A raw numpy/Python exception where an opkit error (or success) was due.")
WrongValue = _kind("WrongValue", "wrong-value")
WrongShape = _kind("WrongShape", "wrong-shape")
NonFinite = _kind("NonFinite", "non-finite")
Mismatch = _kind("Mismatch", "mismatch",
                 "Two runs that must agree do not (layout vs contiguous, CPU vs GPU, ...).")
InputWritten = _kind("InputWritten", "input-written", "A kernel wrote to one of its inputs.")
AliasedOutput = _kind("AliasedOutput", "aliased-output",
                      "An output shares memory with an input without an inplace declaration.")
UndeclaredRead = _kind("UndeclaredRead", "undeclared-read",
                       "A kernel read data it declared it does not need (no_need_buffer).")
MissingKernel = _kind("MissingKernel", "missing-kernel",
                      "A kernel the op must register is missing (a float dtype, a place).")
Uncaught = _kind("Uncaught", "uncaught",
                 "An exception escaped the check: the op raised where the check did not "
                 "expect it, so the check could not run (said once per op in the report).")
TimedOut = _kind("TimedOut", "timeout", "The check (or the op) ran past its time limit.")
Crashed = _kind("Crashed", "crash",
                "The worker process running the check died (a segfault, os._exit).")


class Status(StrEnum):
    """A check result's status; a str (``Status.PASS == "pass"``), so JSON keeps the text."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    UNCONFIRMED = "unconfirmed"   # a disagreement resting on an inference, not confirmed by
                                  # an independent oracle: never a failure (harness.judging.unconfirmed)


PASS, FAIL, SKIP, UNCONFIRMED = Status.PASS, Status.FAIL, Status.SKIP, Status.UNCONFIRMED


@dataclass
class CheckResult:
    """One line of the report: a check on one place and dtype for one case."""

    check: str          # output, grad, dtypes, mutation, aliasing, determinism, lod, ...
    status: str         # pass | fail | skip | unconfirmed
    place: str = ""     # CPU | GPU | "" when not place-specific
    dtype: str = ""     # float32 | float64 | ""
    case: str = ""      # the OpTest class name (or a generated case's name)
    message: str = ""
    worst_error: float | None = None
    kind: str = ""      # a failure's kind (harness.checks.base.Failure subclasses), e.g.
                        # "wrong-value", "kernel-raised"; "" when not classified
    not_judged: str = ""  # a pass that left out values this check judges elsewhere: what
                          # it did not judge here ("output values", "gradient values",
                          # comma-separated); the table shows the cell as `pass*`

    def __post_init__(self):
        self.status = Status(self.status)

    def to_json(self) -> dict:
        data = asdict(self)
        data["status"] = str(self.status)
        if data["worst_error"] is None:
            data.pop("worst_error")
        for optional in ("kind", "not_judged"):
            if not data[optional]:
                data.pop(optional)
        return data

    @property
    def failed(self) -> bool:
        return self.status == FAIL


_collectors: list[list] = []


@contextlib.contextmanager
def collecting():
    """Inside the block, OpTest.check_* append their CheckResults here instead of raising."""
    results: list[CheckResult] = []
    _collectors.append(results)
    try:
        yield results
    finally:
        _collectors.pop()


def current_collector() -> list | None:
    return _collectors[-1] if _collectors else None
