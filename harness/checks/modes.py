"""What the execution-mode checks share (inplace, declared_inputs, concurrency, sparse, plan):
a bitwise comparison of a mode's run with the plain run that names the variable, the element
and the kernel that produced it, and where an error raised inside a kernel came from.
"""
from __future__ import annotations

import numpy as np

from harness.backend.dispatch import kernel_functions
from harness.judging.compare import fmt_index
from harness.backend.context import first_difference, rel
from harness.reporting.messages import error_line  # noqa: F401 - for the mode checks
from harness.reporting.values import fmt_value
from opkit.framework.errors import one_line
from opkit.framework.grad_maker import GRAD_SUFFIX

__all__ = ["kernel_line", "producer", "bitwise_problem", "error_line", "UNSTABLE",
           "steady_difference", "first_line", "one_cpu_combo"]


def kernel_line(op_type: str, dtype: str = "", place: str = "CPU") -> str:
    """'kernel <name> (<file>:<line>)' of the op's kernel for dtype/place (the first one when
    none matches): where a wrong value came from when no exception points at a line; the op
    alone where the run's backend names no kernel function (Backend.kernel_functions)."""
    kernels = kernel_functions(op_type)
    pick = [e for e in kernels if e.place == place and (not dtype or e.dtype == dtype)] or \
        [e for e in kernels if e.place == place] or kernels
    if not pick:
        return f"op '{op_type}'"
    fn = pick[0].fn
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "kernel"))
    where = f" ({rel(code.co_filename)}:{code.co_firstlineno})" if code is not None else ""
    return f"kernel {name} of op '{op_type}'{where}"


def producer(name: str, op_type: str, grad_types) -> str:
    """The op type whose kernel wrote variable `name`: a gradient (X@GRAD) comes from the grad
    op (the first one, when there are several), anything else from the op."""
    if name.endswith(GRAD_SUFFIX) and grad_types:
        return sorted(grad_types)[0]
    return op_type


def bitwise_problem(want: dict, got: dict, want_label: str, got_label: str):
    """None when every array of `want` is bitwise equal in `got`; else (variable name,
    one-line description with the first differing element)."""
    for name, a in want.items():
        diff = first_difference(a, got.get(name))
        if diff is None:
            continue
        if isinstance(diff, str):
            return name, f"{name}: {diff}"
        idx, x, y, ulps = diff
        ulp = f" ({ulps} ULP)" if np.asarray(a).dtype.kind == "f" else ""
        return name, (f"{fmt_index(name, idx)}: {want_label} {fmt_value(x)}, {got_label} "
                      f"{fmt_value(y)}{ulp}")
    return None


UNSTABLE = ("the plain run itself is not reproducible (two runs on the same inputs differ: "
            "`determinism` reports it), so this mode cannot be judged bitwise")


def steady_difference(want: dict, got: dict, want_label: str, got_label: str, rerun):
    """`bitwise_problem(want, got, ...)` of a mode's run against the plain run `want`: None
    when bitwise equal, (variable, description) of the first difference, or (None, UNSTABLE)
    when two more plain runs (`rerun()`) do not give bitwise what the first gave: a
    nondeterministic op is `determinism`'s finding, not the mode's."""
    found = bitwise_problem(want, got, want_label, got_label)
    if found and any(bitwise_problem(want, rerun(), "", "") is not None for _ in range(2)):
        return None, UNSTABLE
    return found


def first_line(exc: BaseException) -> str:
    return one_line(exc).splitlines()[0] if str(exc) else type(exc).__name__


def one_cpu_combo(runnable) -> list:
    """The CPU float64 combo (else the first CPU one): a mode whose bug class does not depend
    on the dtype runs once, to stay cheap."""
    cpu = [c for c in runnable if c.place == "CPU"]
    return [next((c for c in cpu if c.dtype == "float64"), cpu[0])] if cpu else []
