"""The named checks of `opkit test`: ONE table of `harness.checks.base.Check` objects
(`CHECK_MODULES`, one module per check, each defining `CHECK`), plus third-party checks from
the entry-point group `opkit.checks` (a Check instance or subclass; a plain function
`fn(case, context)` becomes a `FunctionCheck`). docs/harness.md "Adding a check".
"""
from __future__ import annotations

import importlib
from typing import Callable

from harness.checks.base import Check, FunctionCheck
from harness.reporting.report import SKIP, CheckResult
from opkit.plugins import entry_points_of, load_entry_point

__all__ = ["CHECK_MODULES", "DEFAULT_CHECKS", "register_check", "unregister_check",
           "get_check", "check_names", "all_checks", "as_check"]

# THE table: one module per check, each defining CHECK (a harness.checks.base.Check).
CHECK_MODULES = [
    "harness.checks.values.output",
    "harness.checks.gradients.grad",
    "harness.checks.values.dtypes",
    "harness.checks.memory.mutation",
    "harness.checks.memory.aliasing",
    "harness.checks.runs.determinism",
    "harness.checks.values.places",
    "harness.checks.values.layout",
    "harness.checks.values.empty",
    "harness.checks.values.extremal",
    "harness.checks.gradients.kinks",
    "harness.checks.values.repeated_input",
    "harness.checks.values.precision",
    "harness.checks.memory.ownership",
    "harness.checks.declarations.attrs",
    "harness.checks.runs.state",
    "harness.checks.values.distribution",
    "harness.checks.declarations.explore",
    "harness.checks.runs.concurrency",
    # the laws every op obeys (issue 36; docs/harness.md "Laws every op obeys")
    "harness.checks.laws.describe",
    "harness.checks.laws.every_grad",
    "harness.checks.laws.refusals",
    "harness.checks.laws.coincidences",
    "harness.checks.laws.trace",
    # kernels that must not tell a test run from production (issue 48; docs/harness.md
    # "Adversarial kernels")
    "harness.checks.adversarial.indistinguishable",
    "harness.checks.adversarial.honest_error",
    "harness.checks.values.against",       # not default: `opkit test --against paddle` adds it
]

# the names of the table's checks, known without importing them (a module's name is its
# check's name)
DEFAULT_CHECKS = [m.rsplit(".", 1)[1] for m in CHECK_MODULES]

_CHECKS: dict[str, Check] = {}
_loaded = False


def as_check(name: str, obj, order: int = 200, **function_check) -> Check:
    """`obj` as a Check: a Check instance as is, a Check subclass instantiated, a plain
    function wrapped (FunctionCheck, with `order` and `function_check`'s arguments).
    Anything else: TypeError naming `name`."""
    if isinstance(obj, Check):
        return obj
    if isinstance(obj, type) and issubclass(obj, Check):
        return obj()
    if callable(obj):
        return FunctionCheck(name, obj, order=order, **function_check)
    raise TypeError(f"check {name!r}: {obj!r} is neither a harness.checks.base.Check nor a "
                    f"function(case, context)")


def _load() -> None:
    """The table's checks, then the entry points' (a name taken already is kept)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in CHECK_MODULES:
        check = importlib.import_module(module).CHECK   # a broken built-in check is loud
        _CHECKS.setdefault(check.name, check)
    for name, value in entry_points_of("opkit.checks"):
        if name in _CHECKS:
            continue
        try:
            _CHECKS[name] = as_check(name, load_entry_point(value))
        except Exception as exc:  # noqa: BLE001 - a broken third-party check is a skip
            _CHECKS[name] = FunctionCheck(name, _unavailable(name, value, exc), order=200)


def _unavailable(name: str, target: str, exc: BaseException) -> Callable:
    def unavailable(case, context):
        return [CheckResult(name, SKIP, "", "", case.name, f"check '{name}' is not "
                            f"available: {target}: {type(exc).__name__}: {exc}")]

    return unavailable


def register_check(name: str, fn=None, *, order: int = 150, description: str = "",
                   default: bool = True, per_case: bool = True, scope: str | None = None):
    """Register check `name`: a Check (instance or subclass), or a function
    `fn(case, context) -> list[CheckResult]` (also as a decorator)."""
    def decorate(f):
        _CHECKS[name] = as_check(name, f, order=order, description=description, default=default,
                                 scope=scope or ("case" if per_case else "op"))
        return f

    return decorate(fn) if fn is not None else decorate


def unregister_check(name: str) -> None:
    _CHECKS.pop(name, None)


def all_checks() -> list[Check]:
    _load()
    return sorted(_CHECKS.values(), key=lambda c: (c.order, c.name))


def check_names() -> list[str]:
    return [c.name for c in all_checks()]


def get_check(name: str) -> Check:
    _load()
    try:
        return _CHECKS[name]
    except KeyError:
        raise KeyError(f"unknown check {name!r} (known: {', '.join(check_names())})") from None
