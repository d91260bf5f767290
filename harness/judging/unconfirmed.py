"""The `unconfirmed` verdict: a disagreement that rests on an inference is confirmed by an
independent oracle before the op is blamed (docs/harness.md, "Verdicts": each oracle and
the declaration that settles its class). Here: `unconfirm`, the NaN/inf oracle
(`nonfinite_verdict`: the op's own dependency structure) and the confirmations of
`explore`, `empty` and `distribution`.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import as_value, map_inputs, normalize_slots
from harness.judging.compare import outside
from harness.judging.distributions import dropout_laws
from harness.reporting.messages import root_cause
from harness.reporting.report import FAIL, UNCONFIRMED, CheckResult, WrongValue

__all__ = ["unconfirm", "unconfirmed_lines", "nonfinite_verdict", "SETTLE", "confirm_raw",
           "confirm_nonfinite", "confirm_stacked", "confirm_reference_domain",
           "undeclared_invalid", "confirm_inferred"]

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


def _values_by_name(inputs: dict) -> dict:
    return {s.name: s.data for items in normalize_slots(inputs).values() for s in items}


def _slot_of(case, var):
    return next((slot for slot, items in normalize_slots(case.inputs).items()
                 if any(s.name == var for s in items)), None)


def _input_proto(case, slot):
    """The op's VarProto of input `slot`, or None."""
    proto = backends.proto(case.op_type)
    return proto.input(slot) if proto is not None and slot else None


def _undeclared_slot(case, ex) -> str | None:
    """The input slot a derived value case `ex` changed, when the op knows it and declares
    no domain for it; else None."""
    var = ex.info.get("var") if isinstance(ex.info, dict) else None
    slot = _slot_of(case, var) if ex.kind == "value" and isinstance(var, str) else None
    vp = _input_proto(case, slot)
    return slot if vp is not None and getattr(vp, "domain", None) is None else None


# -- NaN and inf: the op's dependency structure ------------------------------------------------
def _nonfinite_positions(base: dict, derived: dict) -> dict:
    """{var name: flat indices} where the derived inputs hold a non-finite value the base
    inputs (the test's own values) do not."""
    before = _values_by_name(base)
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


def _dependent_elements(base: dict, derived: dict, run) -> dict | None:
    """{output name: bool mask} of the output elements that depend on the derived inputs'
    non-finite elements: the op (`run(inputs) -> {name: array}`) on the derived inputs with
    those elements put back to the test's value, and to a large positive and a large
    negative value; an element depends on them when it moves. None when it cannot be
    measured (no such elements, the op raises, shapes change)."""
    where = _nonfinite_positions(base, derived)
    if not where:
        return None
    before = _values_by_name(base)

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
        hi, lo = (np.asarray(other.get(name)) for other in runs[1:])
        if hi.shape != a.shape or lo.shape != a.shape:
            return None
        with np.errstate(invalid="ignore"):
            deps[name] = ~(_equal(a, hi) & _equal(a, lo)) if a.dtype.kind in "fc" else \
                (a != hi) | (a != lo)
    return deps


def _equal(a, b) -> np.ndarray:
    """Equal elements, NaN equal to NaN."""
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _nonfinite(a) -> np.ndarray:
    a = np.asarray(a)
    return ~np.isfinite(a) if a.dtype.kind in "fc" else np.zeros(a.shape, bool)


def _same(a, b) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        if a.dtype.kind in "fc" and b.dtype.kind in "fc":
            return _equal(a, b) | np.isclose(a, b, rtol=1e-6, atol=1e-12)
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
    deps = _dependent_elements(base, derived, run)
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


# -- empty: an inferred batch ------------------------------------------------------------------
def confirm_raw(derived, results):
    """`results` of the `empty` check with an IndexError made `unconfirmed` when an integer
    input of no declared domain was left as it is: it may index the emptied input."""
    zeroed = set(derived.info.get("zeroed") or ())
    specs = normalize_slots(derived.case.inputs)
    ints = [slot for slot, items in specs.items() for s in items
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind in "iu" and s.data.size
            and s.name not in zeroed
            and getattr(_input_proto(derived.case, slot), "domain", None) is None]
    if not ints:
        return results
    slots = [slot for slot, items in specs.items() if any(s.name in zeroed for s in items)]
    table = slots[0] if slots else "W"
    inferred = (f"the harness inferred that {', '.join(slots)} is a batch; the integer input "
                f"{', '.join(ints)} (another length, no declared domain) may index it, and "
                f"then a zero-size {table} leaves it pointing nowhere")
    declaration = (f'declare the table a parameter: self.add_input("{table}", ...)'
                   f".as_parameter() in the OpMaker (docs/domains.md): it is then never emptied")
    return [unconfirm(r, inferred, declaration)
            if r.status == FAIL and r.kind == "raw-exception" and "IndexError" in r.message
            else r for r in results]


# -- explore: NaN/inf, another rank, undeclared domains -----------------------------------------
def _finite_declaration(case, var: str | None) -> str:
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
    return unconfirm(result, inferred, _finite_declaration(case, ex.info.get("var")))


def undeclared_invalid(case, ex, result):
    """`result` (the op raised a raw error on a derived value that reference() raises on
    too) as it stands when the input declares its domain; `unconfirmed` when it declares
    none: then the harness only inferred that the value is outside the op's contract, and
    the op and the reference agree that it is invalid -- only the error type differs."""
    slot = _undeclared_slot(case, ex)
    if slot is None:
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
    base = _values_by_name(derived.case.inputs)

    def part(k):
        def fix(s):
            b = base.get(s.name)
            a = s.data
            if isinstance(a, np.ndarray) and b is not None and a.ndim == np.ndim(b) + 1 \
                    and a.shape[0] == 2 and a.shape[1:] == np.shape(b):
                return as_value(s, a[k].copy())
            return as_value(s)
        return map_inputs(ex.inputs, fix)

    slices = [part(k) for k in (0, 1)]
    try:
        parts = [run(inputs) for inputs in slices]
    except Exception:  # noqa: BLE001
        return None
    if not _reference_agrees(derived.case, slices, parts, ex.attrs):
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
    slot = _undeclared_slot(derived.case, ex)
    if slot is None or any(isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f" and
                           not np.isfinite(s.data).all()
                           for items in normalize_slots(ex.inputs).values() for s in items):
        return None             # NaN/inf inputs: confirm_nonfinite's business
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
                differ = outside(have, want, 1e-12, 1e-6)     # the output comparator's rule
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
                    if outside(a, b, 1e-7, 1e-5).any():
                        return False
                elif not np.array_equal(a, b):
                    return False
    return True


# -- distribution: a law inferred from the attrs -----------------------------------------------
def _alternatives(case) -> list[tuple[str, dict]]:
    """(name, laws) of the other conventions the op's attrs allow."""
    proto = backends.proto(case.op_type)
    pattrs = {a.name for a in proto.attrs} if proto is not None else set()
    if "dropout_prob" in pattrs and "dropout_implementation" not in pattrs:
        return [("dropout that always upscales kept values by 1 / (1 - p)",
                 dropout_laws("dropout_prob", None, upscale=True))]
    return []


def confirm_inferred(check, derived, context, results):
    """`results` of the distribution check, with a failure of a law the check inferred
    (the OpTest declares none) made `unconfirmed` when another convention fits."""
    test = getattr(context, "test", None)
    case = derived.case
    own = getattr(test, "distribution", None) or (case.options or {}).get("distribution")
    failed = [r for r in results if r.status == FAIL]
    if own or not failed:
        return results
    for name, laws in _alternatives(case):
        other = replace(case, options={**(case.options or {}), "distribution": laws})
        try:
            again = check._verdict(replace(derived, case=other), context)
        except Exception:  # noqa: BLE001 - no confirmation either way
            continue
        if again and not any(r.status == FAIL for r in again):
            declaration = ("declare the law on the OpTest: distribution = "
                           "harness.judging.distributions.dropout_laws('dropout_prob', None, "
                           "upscale=True) (or any {output: Law}; docs/harness.md)")
            return [unconfirm(failed[0], f"the harness inferred the law from the op's attrs; "
                                         f"the samples fit another convention they allow: "
                                         f"{name}", declaration)] + \
                [r for r in results if r.status != FAIL]
    return results
