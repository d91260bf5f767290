"""A Case: one op configuration to check (what an OpTest's setUp describes)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


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
