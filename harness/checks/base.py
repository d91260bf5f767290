"""The check interface: `Check` (every check of `opkit test` is one), its `compare_each`
template; the failure kinds (`Failure` subclasses, harness.reporting.report) are part of its interface.

How to write a check, `compare_each`'s arguments and the opt-outs: docs/harness.md
"Adding a check".
"""
from __future__ import annotations

from typing import Iterable

from harness.backend.dispatch import cannot, check_override, selected, selector
import numpy as np

from harness.backend.case import Derived, Unsupported, normalize_slots  # noqa: F401 - the check interface
from harness.backend.context import combos, has_float_inputs, result
from harness.inputs.variants import derive
from harness.reporting.messages import raised
from harness.backend.seam import refusal
from harness.options import DEFAULT_SEED
from harness.reporting.report import (FAIL, PASS, SKIP, AliasedOutput, CheckResult,  # noqa: F401
                            Crashed, Failure, InputWritten, KernelRaised, Mismatch,
                            MissingKernel, NonFinite, RawException, TimedOut, Uncaught,
                            UndeclaredRead, WrongShape, WrongValue)

__all__ = ["Check", "FunctionCheck", "Derived", "Unsupported", "Failure", "KernelRaised",
           "WrongValue", "WrongShape", "NonFinite", "RawException", "Mismatch", "InputWritten",
           "AliasedOutput", "UndeclaredRead", "MissingKernel", "TimedOut", "Uncaught", "Crashed",
           "SCOPES"]


# -- a refusal of the values the test's setUp drew --------------------------------------------
REDRAWS = 3     # other seeds setUp runs under to find values the op takes


def drawn_outside_domain(case, context, check: str) -> str | None:
    """Why the op raising on `case` is no failure, or None: the op refuses the case on
    purpose (a clear error), the case holds the values the test's setUp drew under the
    run's seed, and setUp under another seed draws other values the op runs on -- the draw
    left the op's domain (a random integer divisor of 0: Paddle's elementwise_floordiv).
    Where every draw is refused, or setUp draws the same values, the refusal stays a
    failure. Memoized per case in `context.cache`."""
    memo = getattr(context, "cache", None)
    key = ("drawn_outside_domain", id(case))
    if memo is not None and key in memo:
        return memo[key][1]
    found = _drawn_outside_domain(case, context, check)
    if memo is not None:   # the case is kept with its answer: its id is not reused meanwhile
        memo[key] = (case, found)
    return found


def _drawn_outside_domain(case, context, check: str) -> str | None:
    from harness.backend.case import case_from_test
    from harness.backend.seam import prepare
    from harness.selecting.discovery import instantiate

    test = getattr(context, "test", None)
    runnable = combos(case, context, check)[0]
    if test is None or getattr(test, "op_type", None) != case.op_type or not runnable:
        return None
    try:
        prepare(case, runnable[0]).forward()
        return None                 # the case itself runs: the raise is elsewhere
    except Exception as exc:  # noqa: BLE001 - what the op says about the case
        why = refusal(exc)
    if not why:
        return None
    seed = getattr(context, "seed", None) or DEFAULT_SEED
    for k in range(1, REDRAWS + 1):
        s = seed + 7919 * k
        try:
            again = case_from_test(instantiate(type(test), s))
        except Exception:  # noqa: BLE001 - setUp does not run again
            return None
        if _same_inputs(again.inputs, case.inputs):
            return None     # not drawn: the refusal is of the test's fixed values
        try:
            prepare(again, runnable[0]).forward()
        except Exception:  # noqa: BLE001 - that draw is refused too
            continue
        return (f"the case's values, drawn by the test's setUp under seed {seed}, are "
                f"outside the op's domain: the op refuses them ({why[:120]}) and runs the "
                f"values setUp draws under seed {s}")
    return None


def _raised(r: CheckResult) -> bool:
    """A failure that is the op raising (a check's own, or an OpTest method's "... raised")."""
    return r.status == FAIL and (r.kind == KernelRaised.kind or " raised " in r.message)


def _same_inputs(a: dict, b: dict) -> bool:
    sa, sb = normalize_slots(a), normalize_slots(b)
    if sa.keys() != sb.keys() or any(len(sa[k]) != len(sb[k]) for k in sa):
        return False
    for x, y in ((x, y) for k in sa for x, y in zip(sa[k], sb[k])):
        if isinstance(x.data, np.ndarray) and isinstance(y.data, np.ndarray):
            if x.data.shape != y.data.shape or x.data.dtype != y.data.dtype or \
                    not np.array_equal(x.data, y.data, equal_nan=x.data.dtype.kind in "fc"):
                return False
        elif x.data is not y.data:
            return False
    return True


# -- the base class ---------------------------------------------------------------------------
SCOPES = ("case", "op")


def _variant(derived: Derived) -> str:
    return f"variant '{derived.variant}'" + (f" ({derived.note})" if derived.note else "")


class Check:
    """A named check. Subclasses set `name` and implement `verdict` (see the module doc).

    Every check of `opkit test` -- `output` and `grad` included, third-party ones too -- is an
    instance of this class; `harness.checks.catalog` holds them in one table."""

    name: str = ""
    description: str = ""
    order: int = 150
    variants: tuple = ("case",)
    default: bool = True        # run by `opkit test` without --checks
    scope: str = "case"         # "case": every case; "op": once per op (on its first case)
    needs_float: bool = False
    notes_on_pass: bool = False  # `opkit test -v` prints a pass's message as a note
    needs: tuple = ()           # backend capabilities (harness.backend.contract.CAPABILITIES)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # the older spelling `per_case = False` is scope "op"
        if "per_case" in cls.__dict__ and "scope" not in cls.__dict__:
            cls.scope = "case" if cls.__dict__["per_case"] else "op"
        if cls.scope not in SCOPES:
            raise TypeError(f"check {cls.__name__}: scope must be one of {SCOPES}, "
                            f"not {cls.scope!r}")

    @property
    def per_case(self) -> bool:
        return self.scope == "case"

    # -- hooks a subclass may override ---------------------------------------------------------
    def applies(self, case, context) -> str | None:
        """None: run; a string: skip the whole check with that reason."""
        return None

    def verdict(self, derived: Derived, context) -> Iterable[CheckResult]:
        raise NotImplementedError

    # -- the driver ----------------------------------------------------------------------------
    def __call__(self, case, context) -> list[CheckResult]:
        skip_map = (case.options or {}).get("skip", {})
        if self.name in skip_map:
            return [self.skipped(case, f"opted out: {skip_map[self.name]}")]
        instead = check_override(self.name)      # a backend this check cannot apply to
        if isinstance(instead, str):
            return [self.skipped(case, instead)]
        if instead is not None and instead is not self:
            return instead(case, context)
        for capability in self.needs:            # a backend that cannot do what it needs
            why = cannot(capability)
            if why:
                return [self.skipped(case, f"the {selected()} backend cannot: {why}")]
        if self.needs_float and not has_float_inputs(case):
            return [self.skipped(case, "the case has no float input")]
        reason = self.applies(case, context)
        if reason:
            return [self.skipped(case, reason)]
        out: list[CheckResult] = []
        for vname in self.variants:
            if vname != "case" and vname in skip_map:
                out.append(self.skipped(case, f"variant '{vname}' opted out: {skip_map[vname]}"))
                continue
            got = derive(vname, case, context)
            for d in (got if isinstance(got, list) else [got]):
                if isinstance(d, Unsupported):       # always a skip, with the reason
                    out.append(self.skipped(case, d.reason if vname == "case" else
                                            f"variant '{vname}': {d.reason}"))
                    continue
                if d.seed is None:
                    d.seed = getattr(context, "seed", None)
                for r in self.verdict(d, context) or []:
                    if not r.case:
                        r.case = case.name
                    out.append(r)
        if any(_raised(r) for r in out):
            why = drawn_outside_domain(case, context, self.name)
            for r in out if why else ():
                if _raised(r):
                    r.status, r.message, r.kind = SKIP, why, ""
        return out

    # -- the template: run the base, run the variant, compare ---------------------------------
    def compare_each(self, derived: Derived, context, *, variant, compare, base=None,
                     base_fails: str = "skip", refused: str = "fail",
                     base_skip="the base run raises: see the output check",
                     raised_prefix: str = "the op raised ", raised_kind: type | None = None,
                     raised_message=None, passed_message=None, combos=None,
                     base_key=None, variant_takes_base: bool = False) -> list[CheckResult]:
        """THE "run the base, run the variant, compare" loop of the harness, per planned
        place x dtype combo (skips of the rest added). `base(combo)` and `variant(combo)`
        run (combos of one `base_key` share a base run); `compare(base_runs, variant_runs,
        combo)` gives None, a message (kind Mismatch), a (message, FailureKind) pair or ready
        CheckResults. Every argument: docs/harness.md "Adding a check"."""
        results: list[CheckResult] = []
        runnable, _ = self.plan(derived, context, results)
        shared: dict = {}
        for combo in (combos(runnable) if combos is not None else runnable):
            want = None
            if base is not None:
                key = base_key(combo) if base_key is not None else (combo.place, combo.dtype)
                if key not in shared:
                    try:
                        shared[key] = (base(combo), None)
                    except Exception as exc:  # noqa: BLE001 - the base failing is output's
                        shared[key] = (None, exc)
                want, exc = shared[key]
                if exc is not None:
                    if (base_fails(exc) if callable(base_fails) else base_fails) == "fail":
                        results.append(self.failed(derived, combo, "the op raised before the "
                                                   f"check could finish: {raised(exc)}",
                                                   kind=KernelRaised))
                    else:
                        results.append(self.skipped(derived.base, base_skip(exc) if
                                                    callable(base_skip) else base_skip, combo))
                    continue
            try:
                got = variant(combo, want) if variant_takes_base else variant(combo)
            except Exception as exc:  # noqa: BLE001 - a failing kernel is a finding
                why = refusal(exc)
                if why and refused == "pass":
                    results.append(self.passed(derived, combo, f"refused: {why[:120]}"))
                elif why and refused == "skip":
                    results.append(self.skipped(derived.base, (f"{derived.note}: " if
                                                               derived.note else "") +
                                                f"refused ({why[:120]})", combo))
                else:
                    results.append(self.failed(derived, combo, raised_message(exc, combo) if
                                               raised_message else raised_prefix + raised(exc),
                                               kind=raised_kind or KernelRaised))
                continue
            problem = compare(want, got, combo)
            if not problem:
                msg = passed_message(want, got, combo) if passed_message else ""
                results.append(self.passed(derived, combo, msg or ""))
            elif isinstance(problem, list):
                results.extend(problem)
            elif isinstance(problem, tuple):
                results.append(self.failed(derived, combo, problem[0], kind=problem[1]))
            else:
                results.append(self.failed(derived, combo, problem, kind=Mismatch))
        return results

    # -- helpers -----------------------------------------------------------------------------
    def adopt(self, derived: Derived, results, kind: type | None = None) -> list[CheckResult]:
        """Results made on `derived.case` by case-level code, as this check's: the base
        case's name; a failure on a variant says which variant (as `failed` does) and has a
        kind (`kind`'s when it has none)."""
        out = list(results or [])
        for r in out:
            if derived.variant != "case":
                r.case = derived.base.name
                if r.status == FAIL:
                    r.message = f"{_variant(derived)}: {r.message}"
            if r.status == FAIL and not r.kind and kind is not None:
                r.kind = kind.kind
        return out

    def plan(self, derived: Derived, context, skips: list | None = None):
        """The runnable combos of the derived case; skip results go into `skips`."""
        runnable, skip_results = combos(derived.case, context, self.name)
        if skips is not None:
            skips.extend(skip_results)
        return runnable, skip_results

    def skipped(self, case, reason: str, combo=None) -> CheckResult:
        return result(self.name, SKIP, combo, case, reason)

    def passed(self, derived: Derived, combo=None, message: str = "",
               worst: float | None = None) -> CheckResult:
        return result(self.name, PASS, combo, derived.base, message or derived.note, worst)

    def failed(self, derived: Derived, combo, message: str, *, kind: type = Failure,
               where: str = "", repro: str = "", worst: float | None = None) -> CheckResult:
        text = f"{_variant(derived)}: {message}" if derived.variant != "case" else message
        if where:
            text += f" (at {where})"
        repro = repro or self.reproduce(derived.base, derived.seed)
        if repro:
            text += f"\nreproduce: {repro}"
        return result(self.name, FAIL, combo, derived.base, text, worst, kind.kind)

    def reproduce(self, case, seed: int | None = None) -> str:
        """One line that re-runs this check on this case."""
        src = (case.source or "").split("::")[0]
        if not src:
            return ""
        return (f"opkit test {case.op_type} --tests {src} --checks {self.name}"
                + (f" --seed {seed}" if seed is not None and seed != DEFAULT_SEED else "")
                + (f" {selector()}" if selector() else ""))


class FunctionCheck(Check):
    """A plain function `fn(case, context) -> list[CheckResult]` as a Check (the older
    style: `register_check`, or an entry point naming a function). It runs on each of its
    variants' derived cases like every other check."""

    def __init__(self, name: str, fn, *, order: int = 150, description: str = "",
                 default: bool = True, scope: str = "case", variants: tuple = ("case",)):
        if scope not in SCOPES:
            raise ValueError(f"check {name!r}: scope must be one of {SCOPES}, not {scope!r}")
        self.name, self.fn, self.order = name, fn, order
        self.description = description or (fn.__doc__ or "").strip().split("\n")[0]
        self.default, self.scope, self.variants = default, scope, tuple(variants)

    def verdict(self, derived, context):
        return self.adopt(derived, self.fn(derived.case, context))
