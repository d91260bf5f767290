"""The other OpTest cases of an op (for the process-level checks `state` and `determinism`),
and one case's outputs and gradients on a place and dtype."""
from __future__ import annotations

import sys

from harness.selecting.discovery import instantiate, is_optest_class
from harness.processes.forking import can_fork, in_fork  # noqa: F401 - for the state check
from harness.backend.seam import Combo, prepare, run_forward_backward
from harness.options import DEFAULT_SEED

__all__ = ["sibling_classes", "run_case_results", "in_fork", "can_fork"]


def sibling_classes(case, context) -> list:
    """Every discovered OpTest class whose setUp gives `case.op_type`, in discovery order
    (module, class name); the test's own class included. [] without a test."""
    test = getattr(context, "test", None)
    if test is None:
        return []
    mods = [m for n, m in sorted(sys.modules.items()) if n.startswith("opkit_tests.")]
    own = sys.modules.get(type(test).__module__)
    if own is not None and own not in mods:
        mods.append(own)
    found = []
    for m in mods:
        for _, cls in sorted(vars(m).items()):
            if not is_optest_class(cls) or cls.__module__ != m.__name__ or cls in found:
                continue
            if cls is type(test) or _op_type(cls) == case.op_type:
                found.append(cls)
    return found


def _op_type(cls):
    t = getattr(cls, "op_type", "")
    if t:
        return t
    try:
        return getattr(instantiate(cls, DEFAULT_SEED), "op_type", "")
    except Exception:  # noqa: BLE001
        return ""


def run_case_results(case, place: str, dtype: str, seed: int, grads=None) -> dict:
    """{name: array} of the case's outputs and gradients (grads: names; None: the case's
    grad_inputs) on place/dtype; {} when the op raises."""
    try:
        return run_forward_backward(prepare(case, Combo(place, dtype)), case, seed=seed,
                                    wrt=grads)
    except Exception:  # noqa: BLE001 - another case's failure is that case's report
        return {}

