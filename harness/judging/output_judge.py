"""check_output: forward outputs against the expected ones, one CheckResult per place x
dtype it ran (plus skip results, e.g. an unusable GPU); the OpTest method of the same name
and `opkit test` both call it. Tolerances: harness.judging.tolerances.
"""
from __future__ import annotations

import numpy as np

from harness.backend.case import normalize_slots
from harness.judging.compare import compare as _compare  # the one comparator
from harness.backend.context import CheckContext, combos
from harness.backend.seam import Combo, PreparedOp, prepare
from harness.reporting.report import FAIL, PASS, SKIP, CheckResult
from opkit.framework.errors import one_line as first_line

__all__ = ["check_output", "case_outputs", "case_repro", "check_case", "run_combos",
           "prepare_case", "expected_outputs", "first_line"]


def run_combos(case, check: str, places=None, dtypes=None):
    """([(place, dtype)], [skip results]) from THE planner, harness.backend.context.combos."""
    ctx = CheckContext(places=tuple(places) if places is not None else None,
                       dtypes=tuple(dtypes) if dtypes is not None else None)
    runnable, skips = combos(case, ctx, check)
    return [(c.place, c.dtype) for c in runnable], skips


def prepare_case(case, place: str, dtype: str, expected: dict | None = None) -> PreparedOp:
    """A PreparedOp of the case on `place`, float inputs cast to `dtype` (fresh copies): the
    seam's `prepare` (harness.backend.seam), with the expected outputs' slots."""
    if expected is None:
        expected = normalize_slots(expected_outputs(case))
    return prepare(case, Combo(place, dtype), expected=expected)


def expected_outputs(case) -> dict:
    if case.outputs:
        return case.outputs
    if case.reference is not None:
        return case.reference(case.inputs, case.attrs) or {}
    return {}


def check_output(case, atol=None, rtol=None, no_check_set=None, equal_nan=False, repro="",
                 places=None, dtypes=None) -> list[CheckResult]:
    """Run the case's op on every place x float dtype with a kernel; compare every expected
    output (shape, dtype, LoD, values). One CheckResult per place x dtype."""
    try:
        expected = normalize_slots(expected_outputs(case))
    except Exception as exc:  # noqa: BLE001
        return [CheckResult("output", FAIL, "", "", case.name,
                            f"op '{case.op_type}': the reference raised {first_line(exc)}")]
    if not expected:
        return [CheckResult("output", SKIP, "", "", case.name, "the case has no expected outputs")]
    skip_slots = set(no_check_set or ()) | set(case.no_check_set or ())
    runnable, results = run_combos(case, "output", places, dtypes)
    tail = f"\nreproduce: {repro}" if repro else ""
    for place, dtype in runnable:
        where = f"op '{case.op_type}' on {place}" + (f" {dtype}" if dtype else "")
        try:
            prepared = prepare_case(case, place, dtype, expected)
            prepared.forward()
        except Exception as exc:  # noqa: BLE001 - reported as a failed check
            from harness.backend.input_watch import describe_read_only_write

            what = describe_read_only_write(case, dtype, exc) or \
                f"the op raised {first_line(exc)}"
            results.append(CheckResult("output", FAIL, place, dtype, case.name,
                                       f"{where}: {what}{tail}"))
            continue
        problems, worst = [], 0.0
        for slot, specs in expected.items():
            for spec in specs:
                if slot in skip_slots or spec.name in skip_slots or \
                        not isinstance(spec.data, np.ndarray):
                    continue
                got = prepared.array(spec.name)
                fixed = _fixed_dtype(case, place, dtype, spec.name, got, expected)
                msg, w = _compare(spec.name, got, spec.data, dtype, atol, rtol, equal_nan,
                                  fixed)
                if w is not None:
                    worst = max(worst, w)
                if msg:
                    problems.append(msg)
                    continue
                if spec.lengths is not None:
                    lod = prepared.lod_lengths(spec.name) or []
                    if [list(x) for x in lod] != [list(x) for x in spec.lengths]:
                        problems.append(f"output '{spec.name}': LoD (lengths) {lod}, expected "
                                        f"{spec.lengths}")
        status, msg = (FAIL, f"{where}: " + "; ".join(problems) + tail) if problems else (PASS, "")
        results.append(CheckResult("output", status, place, dtype, case.name, msg, worst))
    return results


def _fixed_dtype(case, place, dtype, name, got, expected):
    """The output's dtype when the op fixes it by definition: a float output whose dtype is
    not the run's and is the same in a run of the other float dtype (accuracy's float32
    Accuracy in the float64 run). None otherwise."""
    if got is None or got.dtype.kind != "f" or not dtype or got.dtype.name == dtype:
        return None
    other = "float32" if dtype == "float64" else "float64"
    try:
        p = prepare_case(case, place, other, expected)
        p.forward()
        again = p.array(name)
    except Exception:  # noqa: BLE001 - no other run: not fixed
        return None
    return got.dtype.name if again is not None and again.dtype == got.dtype else None


def case_outputs(case, places=None, dtypes=None, repro="") -> list[CheckResult]:
    """check_output on `case` with its OpTest's options (case.options: atol, rtol,
    no_check_set, equal_nan)."""
    opts = case.options or {}
    return check_output(case, atol=opts.get("atol"), rtol=opts.get("rtol"),
                        no_check_set=opts.get("no_check_set"),
                        equal_nan=bool(opts.get("equal_nan", False)), repro=repro,
                        places=places, dtypes=dtypes)


def case_repro(case) -> str:
    """The reproduce line of the case's `output` and `grad` results."""
    return (case.options or {}).get("repro") or (
        f"opkit test {case.op_type} --tests {case.source.split('::')[0]}" if case.source else "")


def check_case(case, context=None) -> list[CheckResult]:
    """The `output` check of `opkit test` on a Case (options from case.options)."""
    return case_outputs(case, getattr(context, "places", None), getattr(context, "dtypes", None),
                        case_repro(case))
