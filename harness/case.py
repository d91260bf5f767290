"""A Case: one op configuration to check (what an OpTest's setUp describes);
`case_from_test`: the Case an OpTest instance describes; `Derived` / `Unsupported`: a
variant of a case, or why a variant cannot apply (harness.variants makes them, the checks of
harness.checks.base judge them)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Case", "case_from_test", "Derived", "Unsupported"]


@dataclass
class Case:
    """Everything the checks need about one configuration of one op.

    `inputs`/`outputs` are in Paddle's OpTest format (see harness.runner.normalize_slots).
    `reference(inputs, attrs) -> outputs` is optional; `grad_inputs`/`grad_outputs` say what
    check_grad compares (recorded from the OpTest's own calls when `opkit test` runs it).
    """

    name: str
    op_type: str
    inputs: dict
    attrs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    reference: Callable | None = None
    no_check_set: tuple = ()
    grad_inputs: list = field(default_factory=list)
    grad_outputs: list = field(default_factory=list)
    no_grad_set: tuple = ()
    options: dict = field(default_factory=dict)   # atol, rtol, max_relative_error, ...
    source: str = ""                               # "path/to/test_x.py::TestClass"


def case_from_test(test, source: str = "") -> Case:
    """The Case an OpTest instance describes (its own `to_case()` when it has one)."""
    to_case = getattr(test, "to_case", None)
    if callable(to_case):
        case = to_case()
    else:
        reference = getattr(test, "reference", None)
        case = Case(name=type(test).__name__, op_type=test.op_type,
                    inputs=getattr(test, "inputs", {}) or {},
                    attrs=getattr(test, "attrs", {}) or {},
                    outputs=getattr(test, "outputs", {}) or {},
                    reference=reference if callable(reference) else None)
    if source and not case.source:
        case.source = source
    skips = getattr(test, "opkit_skip", None)
    if skips:
        case.options = dict(case.options or {})
        case.options.setdefault("skip", {}).update(skips)
    return case


# -- derived cases (harness.variants makes them, the checks judge them) ------------------------
@dataclass
class Derived:
    """One variant of a case: what a check runs."""

    variant: str            # "case" for the case itself
    case: object            # harness.case.Case (the derived one)
    base: object            # the original Case
    note: str = ""          # what was derived, e.g. "X fed transposed (Fortran order)"
    info: dict = field(default_factory=dict)   # variant-specific facts for the check
    seed: int | None = None  # the run's seed (set by Check.__call__): in `reproduce:` lines


@dataclass
class Unsupported:
    """A variant that cannot apply to this case, with the reason (reported as skip)."""

    variant: str
    reason: str
