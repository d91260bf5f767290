"""The derived cases of issue 45 point 5: every dim cut to 0 (`empty`), the largest finite
value and magnitudes over the exponent range (`extremal`), NaN gradients where the slopes are
finite (`kinks`), 0-D with axis attrs adapted, every bool / value-set value and one failure
per distinct cause (`explore`); each against its broken op (tests/broken_ops/
derivation_breakers_op.py) and its twin."""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.case import Case
from harness.inputs.variants import empty as empty_variant
from harness.inputs.variants import extremal as extremal_variant

EXPECTED = {"broken_rowsum_div": "empty", "broken_naive_norm": "extremal",
            "broken_sq_ratio": "extremal", "broken_prod_rows": "kinks",
            "broken_axis_cumsum": "explore", "broken_two_causes": "explore"}


def _case(x, **kw):
    return Case(op_type=kw.pop("op_type", "relu"), inputs={"X": x}, outputs={}, name="T", **kw)


def test_empty_cuts_every_dim_to_zero():
    derived = empty_variant.derive(_case(np.ones((3, 4, 5))))
    shapes = [d.case.inputs["X"].shape for d in derived]
    assert shapes == [(0, 4, 5), (3, 0, 5), (3, 4, 0)]
    assert [d.info["batch"] for d in derived] == [3, None, None]


def test_extremal_max_finite_and_spread():
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    kinds = {d.info["kind"]: d.case.inputs["X"] for d in extremal_variant.derive(_case(x))}
    assert kinds["max_finite"].reshape(-1)[0] == np.finfo(np.float32).max
    spread = np.abs(kinds["spread"])
    exps = np.log2(spread)
    assert exps.min() <= -120 and exps.max() >= 75 and (exps == np.round(exps)).all()
    assert np.isfinite(spread.astype(np.float32)).all()
    # one element only: no extreme operand of the wide kinds
    assert extremal_variant.derive(_case(np.ones(1)))[-1].info["kind"] == "tiny"


def test_the_derivations_catch_their_broken_ops_and_pass_the_twins(broken_ops):
    from harness.selecting.discovery import discover
    from harness.executing.pool import run_ops

    path = str(broken_ops / "test_derivation_breakers.py")
    by_op = discover([path]).by_op()
    ops = sorted(EXPECTED) + [op.replace("broken_", "good_") for op in EXPECTED]
    reports = {r.op: r for r in run_ops(ops, by_op, isolate=False)}
    for op, check in EXPECTED.items():
        failed = [c for c in reports[op].results if c.status == "fail"]
        assert {c.check for c in failed} == {check}, (op, [c.message[:80] for c in failed])
        twin = reports[op.replace("broken_", "good_")]
        assert not [c for c in twin.results if c.status == "fail"], twin.op
    # a refused declared value does not hide the NaN: both causes reported
    two = [c.message for c in reports["broken_two_causes"].results if c.status == "fail"]
    assert any("refuses an input inside its declared domains" in m for m in two), two
    assert any("NaN dropped" in m for m in two), two


@pytest.mark.parametrize("limit", [1, 3])
def test_explore_judges_every_discrete_value_and_adapts_axis_for_0d(broken_ops, limit):
    from harness.inputs.explore import derive_cases

    case = _case(np.ones((3, 4)), op_type="good_axis_cumsum", attrs={"axis": 1})
    got = derive_cases(case, limit=24)
    zero_d = [ex for ex in got if ex.kind == "shape" and ex.attrs.get("axis") == 0
              and ex.inputs["X"].ndim == 0]
    assert zero_d and "axis = 0" in zero_d[0].note
    two = _case(np.ones((3, 4)), op_type="good_two_causes", attrs={"mode": "sum"})
    notes = [ex.note for ex in derive_cases(two, limit=limit)]
    assert any("mode = 'max'" in n for n in notes)
    assert len(notes) > limit    # the declared values on top of the budget
