"""Check results and where they go: the unit every check produces and the report prints."""
from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from enum import StrEnum


class Status(StrEnum):
    """A check result's status; a str (``Status.PASS == "pass"``), so JSON keeps the text."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    UNCONFIRMED = "unconfirmed"   # a disagreement resting on an inference, not confirmed by
                                  # an independent oracle: never a failure (harness.confirm)


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
    kind: str = ""      # a failure's kind (harness.check.Failure subclasses), e.g.
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
