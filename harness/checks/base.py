"""The check interface: how a check is written, what it declares, what it returns.

The pipeline every check sits in::

    Case (inputs, attrs, expected outputs or reference())
      -> variants (harness.variants: derive a Derived case per variant name, or Unsupported)
      -> plan (harness.checks._support.combos: the runnable place x dtype combos, with the
               skip reasons of the rest)
      -> PreparedOp (harness.runner: built once, run many times)
      -> compare (harness.compare: ONE comparator, ONE dtype-aware tolerance table,
                  harness.tolerances)
      -> numeric gradients (harness.gradient: ONE engine, incl. the one-sided "kink" test)
      -> verdict: list[CheckResult]

Adding a check is ONE module plus ONE line:

1. ``harness/checks/my_check.py``::

       from harness.checks.base import Check

       class MyCheck(Check):
           name = "my_check"                 # the name in the report and in --checks
           description = "what bug class it exists for (one line)"
           order = 150                       # where it sits in the report
           variants = ("case",)              # variant names (harness.variants.VARIANTS);
                                             # "case" is the OpTest's case itself
           needs_float = True                # skip (with the reason) without float inputs

           def verdict(self, derived, context):
               # derived.case: the (derived) Case; derived.base: the original one;
               # derived.variant: the variant name; derived.note: what was derived
               for combo in self.plan(derived, context):   # skips are added for you
                   ...
                   yield self.passed(derived, combo)
                   # or: yield self.failed(derived, combo, "what was wrong",
                   #                       where="idx / kernel file:line", repro="...")

       CHECK = MyCheck()

2. one line in ``harness.checks.registry.CHECK_MODULES``: ``"harness.checks.my_check"``.

A check may also be a plain function ``fn(case, context) -> list[CheckResult]`` registered
with ``register_check`` (the older style; still supported).

Opting out: an OpTest (or Case) sets ``opkit_skip = {"empty": "reason ..."}`` (Case:
``options["skip"]``); the check is then *skip* with that reason, printed in the report.
A variant that cannot apply to a case (no float input, no LoD, ...) is *skip* with the reason
the variant gives, never *pass*.

Failure kinds are types (``harness.checks.base.Failure`` subclasses), never message searches:
``result.kind`` (on CheckResults made by ``failed``) names the class.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from harness.report import FAIL, PASS, SKIP, CheckResult

__all__ = ["Check", "Derived", "Unsupported", "Failure", "KernelRaised", "WrongValue",
           "WrongShape", "NonFinite", "RawException", "Mismatch", "failure_kind"]


# -- failure kinds (types, not messages) ------------------------------------------------------
class Failure(Exception):
    """A check's finding; the subclass is the kind."""

    kind = "failure"


class KernelRaised(Failure):
    kind = "kernel-raised"


class RawException(Failure):
    """A raw numpy/Python exception where an opkit error (or success) was due."""

    kind = "raw-exception"


class WrongValue(Failure):
    kind = "wrong-value"


class WrongShape(Failure):
    kind = "wrong-shape"


class NonFinite(Failure):
    kind = "non-finite"


class Mismatch(Failure):
    """Two runs that must agree do not (layout vs contiguous, CPU vs GPU, ...)."""

    kind = "mismatch"


def failure_kind(exc: BaseException) -> str:
    return getattr(exc, "kind", type(exc).__name__)


# -- derived cases --------------------------------------------------------------------------
@dataclass
class Derived:
    """One variant of a case: what a check runs."""

    variant: str            # "case" for the case itself
    case: object            # harness.case.Case (the derived one)
    base: object            # the original Case
    note: str = ""          # what was derived, e.g. "X fed transposed (Fortran order)"
    info: dict = field(default_factory=dict)   # variant-specific facts for the check


@dataclass
class Unsupported:
    """A variant that cannot apply to this case, with the reason (reported as skip)."""

    variant: str
    reason: str


# -- the base class ---------------------------------------------------------------------------
class Check:
    """A named check. Subclasses set `name` and implement `verdict` (see the module doc)."""

    name: str = ""
    description: str = ""
    order: int = 150
    variants: tuple = ("case",)
    default: bool = True        # run by `opkit test` without --checks
    per_case: bool = True       # False: once per op (its first case)
    needs_float: bool = False

    # -- hooks a subclass may override ---------------------------------------------------------
    def applies(self, case, context) -> str | None:
        """None: run; a string: skip the whole check with that reason."""
        return None

    def verdict(self, derived: Derived, context) -> Iterable[CheckResult]:
        raise NotImplementedError

    # -- the driver ----------------------------------------------------------------------------
    def __call__(self, case, context) -> list[CheckResult]:
        from harness.variants import derive

        skip_map = (case.options or {}).get("skip", {}) if case.options else {}
        if self.name in skip_map:
            return [self.skipped(case, f"opted out: {skip_map[self.name]}")]
        if self.needs_float and not _has_float_input(case):
            return [self.skipped(case, "the case has no float input")]
        reason = self.applies(case, context)
        if reason:
            return [self.skipped(case, reason)]
        out: list[CheckResult] = []
        for vname in self.variants:
            if vname in skip_map:
                out.append(self.skipped(case, f"variant '{vname}' opted out: {skip_map[vname]}"))
                continue
            got = derive(vname, case, context)
            for d in (got if isinstance(got, list) else [got]):
                if isinstance(d, Unsupported):
                    out.append(self.skipped(case, d.reason))
                    continue
                out.extend(self.verdict(d, context) or [])
        return out

    # -- helpers -----------------------------------------------------------------------------
    def plan(self, derived: Derived, context, skips: list | None = None):
        """The runnable combos of the derived case; skip results go into `skips`."""
        from harness.checks._support import combos

        runnable, skip_results = combos(derived.case, context, self.name)
        if skips is not None:
            skips.extend(skip_results)
        return runnable, skip_results

    def skipped(self, case, reason: str, combo=None) -> CheckResult:
        return CheckResult(self.name, SKIP, combo.place if combo else "",
                           combo.dtype if combo else "", case.name, reason)

    def passed(self, derived: Derived, combo=None, message: str = "",
               worst: float | None = None) -> CheckResult:
        return CheckResult(self.name, PASS, combo.place if combo else "",
                           combo.dtype if combo else "", derived.base.name,
                           message or derived.note, worst)

    def failed(self, derived: Derived, combo, message: str, *, kind: type = Failure,
               where: str = "", repro: str = "", worst: float | None = None) -> CheckResult:
        head = f"variant '{derived.variant}'" + (f" ({derived.note})" if derived.note else "")
        text = f"{head}: {message}" if derived.variant != "case" else message
        if where:
            text += f" (at {where})"
        if repro:
            text += f"\nreproduce: {repro}"
        r = CheckResult(self.name, FAIL, combo.place if combo else "",
                        combo.dtype if combo else "", derived.base.name, text, worst)
        r.kind = kind.kind
        return r


def _has_float_input(case) -> bool:
    import numpy as np

    from harness.runner import normalize_slots

    for specs in normalize_slots(case.inputs).values():
        for s in specs:
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f":
                return True
    return False


def with_variants(name: str, fn, variants: tuple):
    """A function-style check `fn(case, context) -> list[CheckResult]` run on each variant
    (e.g. mutation on the case and on its all-default-attrs variant). Results of a variant
    other than "case" carry the variant's name in their message."""

    def run(case, context):
        from harness.variants import derive

        skip_map = (case.options or {}).get("skip", {}) if case.options else {}
        out = []
        for vname in variants:
            if vname != "case" and vname in skip_map:
                out.append(CheckResult(name, SKIP, "", "", case.name,
                                       f"variant '{vname}' opted out: {skip_map[vname]}"))
                continue
            got = derive(vname, case, context)
            for d in (got if isinstance(got, list) else [got]):
                if isinstance(d, Unsupported):
                    if vname != "case":
                        continue   # e.g. no attrs to default: the case run covers it
                    out.append(CheckResult(name, SKIP, "", "", case.name, d.reason))
                    continue
                for r in fn(d.case, context) or []:
                    r.case = case.name
                    if vname != "case" and r.status == FAIL:
                        r.message = f"variant '{vname}' ({d.note}): {r.message}"
                    if vname != "case" and r.status == SKIP:
                        continue
                    out.append(r)
        return out

    run.__name__ = name
    run.__doc__ = fn.__doc__
    return run
