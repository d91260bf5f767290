"""The named checks of `opkit test`: name -> function(case, context) -> list[CheckResult].

Adding a check is one entry::

    from harness.checks.registry import register_check

    @register_check("lod", order=40, description="LoD edge cases ...")
    def check_lod(case, context):
        return [CheckResult("lod", "pass", "CPU", "float64", case.name)]

or, without importing anything at start-up, one line in `BUILTIN` below naming the module
and function (loaded on first use). Third-party checks come in through the entry point group
`opkit.checks` (`name = "package.module:function"`).

New-style checks (harness.checks.base.Check subclasses) are ONE line in `CHECK_MODULES`
below: the module path; the module defines `CHECK = MyCheck()` and the instance carries its
name, order, description and variants. See harness.checks.base for how to write one.

Hooks (pytest-plugin-like, optional): a check module may define `applies(case) -> str|None`
(None: run; a string: skip with that reason) as the function's attribute `applies`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

__all__ = ["CheckSpec", "register_check", "get_check", "check_names", "all_checks",
           "BUILTIN", "DEFAULT_CHECKS"]


@dataclass
class CheckSpec:
    name: str
    target: str | Callable          # "module:function" or the function itself
    order: int = 50
    description: str = ""
    default: bool = True            # run by `opkit test` without --checks
    per_case: bool = True           # False: runs once per op (on its first case)

    def function(self) -> Callable:
        if callable(self.target):
            return self.target
        module, _, attr = self.target.partition(":")
        fn = getattr(importlib.import_module(module), attr)
        self.target = fn
        return fn


# name, "module:function", order, description, per_case
BUILTIN = [
    ("output", "harness.checks.optest:check_output", 10,
     "forward outputs (and output LoD) against the expected ones", True),
    ("grad", "harness.checks.optest:check_grad", 20,
     "analytic gradients against numeric ones", True),
    ("dtypes", "harness.checks.dtypes:check", 30,
     "float32 and float64 kernels on every place, for the op and its grad op", False),
    ("mutation", "harness.checks.mutation:check", 40,
     "no kernel wrote to any of its inputs", True),
    ("aliasing", "harness.checks.aliasing:check", 50,
     "no output shares memory with an input unless declared inplace", True),
    ("determinism", "harness.checks.determinism:check", 60,
     "repeated runs give bitwise-identical outputs and gradients", True),
    ("lod", "harness.checks.lod:check", 70,
     "LoD edge cases (empty sequences, all-empty batch, one sequence)", True),
    ("no_need_buffer", "harness.checks.no_need_buffer:check", 80,
     "grad kernels never read the data of no_need_buffer variables", True),
    ("inplace", "harness.checks.inplace:check", 90,
     "declared inplace pairs give the same results when buffers are reused", True),
    ("places", "harness.checks.places:check", 100, "CPU and GPU agree", True),
]

# New-style checks: one module per check, each defining CHECK (a harness.checks.base.Check).
CHECK_MODULES = [
    "harness.checks.layout",
    "harness.checks.empty",
    "harness.checks.extremal",
    "harness.checks.kinks",
    "harness.checks.repeated_input",
    "harness.checks.infer_shape",
    "harness.checks.precision",
    "harness.checks.ownership",
    "harness.checks.attrs",
    "harness.checks.state",
    "harness.checks.declared_inputs",
    "harness.checks.concurrency",
    "harness.checks.sparse",
    "harness.checks.plan",
]

_CHECKS: dict[str, CheckSpec] = {}
_loaded_entry_points = False


def _load_builtin() -> None:
    for name, target, order, description, per_case in BUILTIN:
        _CHECKS.setdefault(name, CheckSpec(name, target, order, description, True, per_case))
    for module in CHECK_MODULES:
        try:
            check = importlib.import_module(module).CHECK
        except (ImportError, AttributeError):
            continue   # a module not written yet (or broken): `opkit test` lists it as absent
        _CHECKS.setdefault(check.name, CheckSpec(check.name, check, check.order,
                                                 check.description, check.default,
                                                 check.per_case))


def _load_entry_points() -> None:
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    try:
        from importlib.metadata import entry_points

        for ep in entry_points(group="opkit.checks"):
            _CHECKS.setdefault(ep.name, CheckSpec(ep.name, ep.value.replace(" ", ""), 200))
    except Exception:  # a broken third-party entry point must not stop the run
        pass


def register_check(name: str, fn: Callable | None = None, *, order: int = 150,
                   description: str = "", default: bool = True, per_case: bool = True):
    """Register `fn(case, context) -> list[CheckResult]` as check `name` (also a decorator)."""

    def decorate(f):
        _CHECKS[name] = CheckSpec(name, f, order, description or (f.__doc__ or "").strip()
                                  .split("\n")[0], default, per_case)
        return f

    return decorate(fn) if fn is not None else decorate


def unregister_check(name: str) -> None:
    _CHECKS.pop(name, None)


def all_checks() -> list[CheckSpec]:
    _load_builtin()
    _load_entry_points()
    return sorted(_CHECKS.values(), key=lambda s: (s.order, s.name))


def check_names() -> list[str]:
    return [s.name for s in all_checks()]


def get_check(name: str) -> CheckSpec:
    _load_builtin()
    _load_entry_points()
    try:
        return _CHECKS[name]
    except KeyError:
        raise KeyError(f"unknown check {name!r} (known: {', '.join(check_names())})") from None


DEFAULT_CHECKS = [name for name, *_ in BUILTIN] + [
    m.rsplit(".", 1)[1] for m in CHECK_MODULES]
