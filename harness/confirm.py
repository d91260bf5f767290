"""The `unconfirmed` verdict: a disagreement that rests on an inference is confirmed by an
independent oracle before the op is blamed.

A check fails only on evidence that the op breaks its declared contract or a law every op
obeys. What the harness inferred -- a law from the attrs, a domain, a role (parameter,
accumulator), differentiability -- and the author's reference on inputs the test never
gives are hypotheses. Where such a disagreement cannot be confirmed, the result is
`unconfirmed` (`harness.report.UNCONFIRMED`): reported with the values, counted apart, never
a failure (exit 0), and its message names the ONE declaration that settles it (docs/harness.md,
"Verdicts").

Oracles here:
* `nonfinite_verdict`: the op's own dependency structure for NaN and inf. A non-finite input
  element may reach exactly the outputs that depend on it; which those are is measured on
  the op itself, with finite values put in its place (outputs that move when it moves).
  The op giving NaN where nothing non-finite reaches is a confirmed failure; the reference
  giving NaN there is the reference's error ("the reference is wrong here").
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.case import as_value, map_inputs, normalize_slots
from harness.messages import root_cause
from harness.report import UNCONFIRMED, CheckResult

__all__ = ["unconfirm", "unconfirmed_lines", "nonfinite_verdict", "dependent_elements",
           "SETTLE"]

SETTLE = "settle it:"         # the line of an unconfirmed message that names the declaration


def unconfirm(result: CheckResult, inferred: str, declaration: str) -> CheckResult:
    """The failed `result` as `unconfirmed`: what was inferred, the values (its message),
    and the declaration that settles it."""
    head, _, rest = (result.message or "").partition("\nreproduce:")
    head = head.split("\nminimal case:")[0]
    text = f"unconfirmed ({inferred}): {head}\n{SETTLE} {declaration}"
    if rest:
        text += f"\nreproduce:{rest}"
    return replace(result, status=UNCONFIRMED, message=text, kind="unconfirmed")


def unconfirmed_lines(results) -> list[str]:
    """One block per check and message shape for the unconfirmed results."""

    groups: dict[tuple, list] = {}
    for r in results:
        if r.status == UNCONFIRMED:
            groups.setdefault((r.check, root_cause(r)), []).append(r)
    lines = []
    for (check, _), rs in groups.items():
        where = ", ".join(dict.fromkeys("/".join(x for x in (r.place, r.dtype) if x)
                                        for r in rs if r.place or r.dtype))
        cases = ", ".join(dict.fromkeys(r.case for r in rs if r.case))
        label = " ".join(x for x in (where, f"[{cases}]" if cases else "") if x)
        lines.append(f"UNCONFIRMED {check}{' ' + label if label else ''}: {rs[0].message}")
    return lines


# -- NaN and inf: the op's dependency structure ------------------------------------------------
def _nonfinite_positions(base: dict, derived: dict) -> dict:
    """{var name: flat indices} where the derived inputs hold a non-finite value the base
    inputs (the test's own values) do not."""

    before = {s.name: s.data for items in normalize_slots(base).values() for s in items}
    out = {}
    for items in normalize_slots(derived).values():
        for s in items:
            a, b = s.data, before.get(s.name)
            if not isinstance(a, np.ndarray) or a.dtype.kind != "f" or b is None or \
                    np.shape(b) != a.shape:
                continue
            with np.errstate(invalid="ignore"):
                bad = ~np.isfinite(a) & np.isfinite(np.asarray(b, dtype=float))
            if bad.any():
                out[s.name] = np.flatnonzero(bad)
    return out


def dependent_elements(base: dict, derived: dict, run) -> dict | None:
    """{output name: bool mask} of the output elements that depend on the derived inputs'
    non-finite elements: the op (`run(inputs) -> {name: array}`) on the derived inputs with
    those elements put back to the test's value, and to a large positive and a large
    negative value; an element depends on them when it moves. None when it cannot be
    measured (no such elements, the op raises, shapes change)."""

    where = _nonfinite_positions(base, derived)
    if not where:
        return None
    before = {s.name: s.data for items in normalize_slots(base).values() for s in items}

    def filled(how):
        def fix(s):
            if s.name not in where:
                return as_value(s)
            a = s.data.copy()
            ref = np.asarray(before[s.name], dtype=a.dtype).reshape(-1)
            big = float(np.max(np.abs(ref))) * 4 + 10 if ref.size else 10.0
            idx = where[s.name]
            a.reshape(-1)[idx] = {"base": ref[idx], "hi": big, "lo": -big}[how]
            return as_value(s, a)
        return map_inputs(derived, fix)

    try:
        runs = [run(filled(how)) for how in ("base", "hi", "lo")]
    except Exception:  # noqa: BLE001 - no measurement, no confirmation
        return None
    deps = {}
    for name, a in runs[0].items():
        a = np.asarray(a)
        masks = []
        for other in runs[1:]:
            b = np.asarray(other.get(name))
            if b.shape != a.shape:
                return None
            with np.errstate(invalid="ignore"):
                masks.append(~((a == b) | (np.isnan(a) & np.isnan(b))) if a.dtype.kind in "fc"
                             else a != b)
        deps[name] = np.logical_or.reduce(masks) if masks else np.zeros(a.shape, bool)
    return deps


def _nonfinite(a) -> np.ndarray:
    a = np.asarray(a)
    return ~np.isfinite(a) if a.dtype.kind in "fc" else np.zeros(a.shape, bool)


def _same(a, b) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        if a.dtype.kind in "fc" and b.dtype.kind in "fc":
            return (a == b) | (np.isnan(a) & np.isnan(b)) | np.isclose(a, b, rtol=1e-6,
                                                                       atol=1e-12)
        return a == b


def nonfinite_verdict(base: dict, derived: dict, expected: dict, got: dict, run):
    """How a disagreement between the op (`got`) and the reference (`expected`) on inputs
    with NaN/inf the test never gives stands against the op's dependency structure:

    ("fail", text): confirmed against the op -- it gives a non-finite value at an output
      no non-finite input reaches, or drops every non-finite value the reference has;
    ("reference", text): the reference gives non-finite values at outputs no non-finite
      input reaches, where the op is finite ("the reference is wrong here");
    ("moved", text): every difference is at outputs that depend on the non-finite inputs
      and the op gives the same non-finite values there, elsewhere (a NaN placed by a sort);
    None: no verdict (no non-finite input, nothing measured, other differences): the
      caller keeps its own.
    """
    deps = dependent_elements(base, derived, run)
    if deps is None:
        return None

    reference_wrong, moved, confirmed = [], [], []
    for items in normalize_slots(expected).values():
        for s in items:
            want, have = np.asarray(s.data), got.get(s.name)
            dep = deps.get(s.name)
            if have is None or dep is None or not isinstance(s.data, np.ndarray):
                continue
            have = np.asarray(have)
            if have.shape != want.shape or dep.shape != want.shape:
                return None
            differ = ~_same(have, want)
            if not differ.any():
                continue
            nf_have, nf_want = _nonfinite(have), _nonfinite(want)
            spread = differ & nf_have & ~dep
            if spread.any():
                i = np.unravel_index(int(np.flatnonzero(spread)[0]), have.shape)
                confirmed.append(f"{s.name}{list(map(int, i))} = {have[i]} though no "
                                 f"non-finite input reaches it (it does not move when they do)")
                continue
            wrong_ref = differ & nf_want & ~nf_have & ~dep
            rest = differ & ~wrong_ref
            if wrong_ref.any():
                i = np.unravel_index(int(np.flatnonzero(wrong_ref)[0]), have.shape)
                reference_wrong.append(f"{s.name}{list(map(int, i))}: reference() gives "
                                       f"{want[i]}, the op {have[i]}, and that output does "
                                       "not depend on the non-finite inputs")
            if not rest.any():
                continue
            if (rest & ~dep).any():
                return None              # a difference the non-finite inputs do not explain
            if want.dtype.kind not in "fc":
                continue    # indices moving with the values (a sort's): they follow a
                            # float output's verdict, never decide one (an arg-max alone
                            # over a NaN gets no verdict: the caller's failure stands)
            same_values = sorted(map(str, have[dep & nf_have])) == \
                sorted(map(str, want[dep & nf_want]))
            gone = (rest & nf_want & ~nf_have).any()
            made = (rest & nf_have & ~nf_want).any()
            if same_values and gone and made:
                i = np.unravel_index(int(np.flatnonzero(rest & nf_want)[0]), have.shape)
                moved.append(f"{s.name}: the op and reference() give the same non-finite "
                             f"values among the outputs that depend on the non-finite "
                             f"inputs, at other places (e.g. {s.name}{list(map(int, i))}: "
                             f"reference() {want[i]}, the op {have[i]})")
            else:
                return None              # dropped or made: the caller's failure stands
    if confirmed:
        return ("fail", "; ".join(confirmed))
    if moved:
        return ("moved", "; ".join(moved + reference_wrong))
    if reference_wrong:
        return ("reference", "; ".join(reference_wrong))
    return None
