"""`explore`'s disagreements on NaN and inf, confirmed by the op's dependency structure
(`harness.confirm.nonfinite_verdict`) before the op is blamed.

The author's reference was written for the test's values; on a NaN it may be the one that
is wrong (an exclusive scan as `cumsum(x) - x`, a pooling as a product with a 0/1 window
matrix), or the two may place a NaN differently (a descending sort). Only a disagreement
the oracle confirms is a failure; the others are `unconfirmed`, naming the declaration that
settles them: the input's domain `D.finite()` (then NaN and inf are not derived for it).
"""
from __future__ import annotations

import numpy as np

from harness.case import as_value, map_inputs, normalize_slots
from harness.check import WrongValue
from harness.confirm import nonfinite_verdict, unconfirm
from opkit.registry import op_info

__all__ = ["confirm_nonfinite", "confirm_stacked", "confirm_reference_domain",
           "finite_declaration", "undeclared_invalid"]


def finite_declaration(case, var: str | None) -> str:
    """The declaration that keeps NaN and inf out of the input holding variable `var`."""
    slot = _slot_of(case, var) or var or "X"
    return (f'declare the input\'s domain in the OpMaker: self.add_input("{slot}", ...)'
            f".set_domain(D.finite()) (opkit.framework.domains; docs/domains.md), and NaN "
            f"and inf are no longer derived for it; or make reference() right for them")


def confirm_nonfinite(check, derived, combo, ex, new, what, problem, expected, got, run):
    """A CheckResult (a confirmed failure or an unconfirmed result) for a disagreement on
    derived NaN/inf inputs, or None: not such a disagreement, the caller judges it."""

    case = derived.case
    verdict = nonfinite_verdict(case.inputs, ex.inputs, expected, got, run)
    if verdict is None:
        return None
    kind, text = verdict
    if kind == "fail":
        return check._fail(derived, combo, ex, new, f"{what}: {problem}; confirmed by the "
                           f"op's own dependency structure: {text}", kind=WrongValue,
                           confirm_check="output")
    inferred = {"reference": "the reference is wrong here, on an input the test never "
                             "gives: the op's dependency structure disagrees with it",
                "moved": "reference() and the op place a non-finite value differently; no "
                         "independent oracle decides which is right"}[kind]
    result = check.failed(derived, combo, f"{what}: {problem}; {text}", kind=WrongValue,
                          repro=check.reproduce(derived.base))
    return unconfirm(result, inferred, finite_declaration(case, ex.info.get("var")))


def _slot_of(case, var):
    return next((slot for slot, items in normalize_slots(case.inputs).items()
                 if any(s.name == var for s in items)), None)


def undeclared_invalid(case, ex, result):
    """`result` (the op raised a raw error on a derived value that reference() raises on
    too) as it stands when the input declares its domain; `unconfirmed` when it declares
    none: then the harness only inferred that the value is outside the op's contract, and
    the op and the reference agree that it is invalid -- only the error type differs."""

    var = ex.info.get("var") if isinstance(ex.info, dict) else None
    slot = _slot_of(case, var) if ex.kind == "value" and isinstance(var, str) else None
    proto = op_info(case.op_type).proto
    vp = proto.input(slot) if proto is not None and slot else None
    if vp is None or getattr(vp, "domain", None) is not None:
        return result
    return unconfirm(result, f"the harness inferred that this value of {slot} is outside "
                             f"the op's contract (no domain is declared for {slot}); the op "
                             "and reference() both reject it, only with other errors",
                     f'declare the domain of {slot} in the OpMaker, e.g. self.add_input('
                     f'"{slot}", ...).set_domain(D.integers(0, D.dim("W", 0))) '
                     f"(docs/domains.md): outside it the op must then refuse with an opkit "
                     f"error")


def confirm_stacked(check, derived, combo, ex, problem, got, run):
    """For the derived case that stacks the test's inputs with new values along a new
    leading dim: when the op's outputs are exactly the stack of its outputs on each slice
    (the rank the test verified), a disagreement with reference() is the reference's, not
    written for that rank: `unconfirmed`. Else None (the caller's failure stands)."""


    if not (ex.kind == "shape" and "stacked" in ex.note):
        return None
    base = {s.name: s.data for items in normalize_slots(derived.case.inputs).values()
            for s in items}

    def part(k):
        def fix(s):
            b = base.get(s.name)
            a = s.data
            if isinstance(a, np.ndarray) and b is not None and a.ndim == np.ndim(b) + 1 \
                    and a.shape[0] == 2 and a.shape[1:] == np.shape(b):
                return as_value(s, a[k].copy())
            return as_value(s)
        return map_inputs(ex.inputs, fix)

    try:
        parts = [run(part(k)) for k in (0, 1)]
    except Exception:  # noqa: BLE001
        return None
    if not _reference_agrees(derived.case, [part(k) for k in (0, 1)], parts, ex.attrs):
        return None     # the op is wrong on a slice too: the failure stands
    for name, have in got.items():
        have = np.asarray(have)
        try:
            want = np.stack([np.asarray(p[name]) for p in parts])
        except (KeyError, ValueError):
            return None
        if want.shape != have.shape or not np.array_equal(want, have, equal_nan=True):
            return None
    result = check.failed(derived, combo, f"{ex.note}: {problem}; the op's outputs are "
                          "exactly the stack of its outputs on each slice (the rank the test "
                          "checks)", kind=WrongValue, repro=check.reproduce(derived.base))
    slot = next(iter(normalize_slots(derived.case.inputs)), "X")
    return unconfirm(result, "reference() was written for the test's rank and disagrees "
                             "with the op on another, where the op is consistent with "
                             "itself on the test's rank",
                     f"declare the ranks the op takes: refuse others in infer_shape "
                     f"(enforce(len(ctx.get_input_dim(\"{slot}\")) == 2, "
                     f"errors.InvalidArgument(...))), or make reference() take any rank")


def confirm_reference_domain(check, derived, combo, ex, problem, expected, got):
    """On finite derived values of an input with no declared domain (every value negative,
    say, fed to an accumulator that is never negative in use), reference() giving NaN or
    inf where the op is finite -- and differing nowhere else -- says the value is outside
    the reference's domain, not that the op is wrong: `unconfirmed`, settled by the input's
    domain (`D.nonnegative()`, ...). None otherwise."""



    var = ex.info.get("var") if isinstance(ex.info, dict) else None
    if ex.kind != "value" or not isinstance(var, str):
        return None
    for items in normalize_slots(ex.inputs).values():
        for s in items:
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f" and \
                    not np.isfinite(s.data).all():
                return None             # NaN/inf inputs: confirm_nonfinite's business
    slot = _slot_of(derived.case, var)
    proto = op_info(derived.case.op_type).proto
    vp = proto.input(slot) if proto is not None and slot else None
    if vp is None or getattr(vp, "domain", None) is not None:
        return None
    seen = False
    for items in normalize_slots(expected).values():
        for s in items:
            want, have = np.asarray(s.data), got.get(s.name)
            if have is None or want.dtype.kind != "f":
                continue
            have = np.asarray(have)
            if have.shape != want.shape:
                return None
            with np.errstate(invalid="ignore"):
                differ = ~((have == want) | (np.isnan(have) & np.isnan(want)) |
                           np.isclose(have, want, rtol=1e-6, atol=1e-12))
                ref_only = ~np.isfinite(want) & np.isfinite(have)
            if (differ & ~ref_only).any():
                return None
            seen = seen or bool(ref_only.any())
    if not seen:
        return None
    result = check.failed(derived, combo, f"{ex.note}: {problem}", kind=WrongValue,
                          repro=check.reproduce(derived.base))
    return unconfirm(result, f"reference() gives NaN or inf from finite values of {slot}, "
                             "where the op is finite: the harness inferred these values are "
                             f"inside the op's contract ({slot} declares no domain)",
                     f'declare the domain of {slot} in the OpMaker, e.g. self.add_input('
                     f'"{slot}", ...).set_domain(D.nonnegative()) (docs/domains.md): values '
                     "outside it are then not derived")


def _reference_agrees(case, inputs_list, outputs_list, attrs) -> bool:
    """reference() on each slice (the test's rank) equals the op's outputs there."""


    for inputs, got in zip(inputs_list, outputs_list):
        try:
            with np.errstate(all="ignore"):
                want = case.reference(inputs, dict(attrs))
        except Exception:  # noqa: BLE001
            return False
        for items in normalize_slots(want).values():
            for s in items:
                have = got.get(s.name)
                if have is None:
                    continue
                a, b = np.asarray(have), np.asarray(s.data)
                if a.shape != b.shape:
                    return False
                if a.dtype.kind in "fc" or b.dtype.kind in "fc":
                    if not np.allclose(a.astype(float), b.astype(float), rtol=1e-5,
                                       atol=1e-7, equal_nan=True):
                        return False
                elif not np.array_equal(a, b):
                    return False
    return True
