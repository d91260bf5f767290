"""A clear refusal of values the test's setUp drew at random under opkit's seed (a divisor
of 0: Paddle's elementwise_floordiv ZeroDim3 at seed 1) is a skip naming the draw, not a
failure, when setUp under another seed draws values the op runs on; a refusal of fixed
values stays a failure (tests/harness/fixtures/drawn_divisor_op.py)."""
from __future__ import annotations

from harness_test_helpers import FIXTURES


def _results(seed):
    from harness.executing.pool import run_ops
    from harness.selecting.discovery import discover

    by_op = discover([str(FIXTURES / "drawn_divisor_optests.py")]).by_op()
    report = run_ops(["fixture_int_floordiv"], by_op, isolate=False, seed=seed,
                     checks=["output", "determinism", "ownership", "attrs"])[0]
    out: dict = {}
    for r in report.results:
        out.setdefault(r.case, []).append(r)
    return out


def test_a_drawn_value_outside_the_domain_is_a_skip_and_a_fixed_one_a_failure(broken_ops):
    got = _results(28)         # seed 28: setUp draws a divisor of 0
    drawn = got["TestDrawnDivisor"]
    assert drawn and all(r.status == "skip" for r in drawn), [(r.check, r.status, r.message)
                                                              for r in drawn]
    assert "outside the op's domain" in drawn[0].message and "seed 28" in drawn[0].message
    fixed = [r for r in got["TestFixedZeroDivisor"] if r.status == "fail"]
    assert {r.check for r in fixed} == {"output", "determinism", "ownership", "attrs"}


def test_a_draw_inside_the_domain_runs_as_usual(broken_ops):
    drawn = _results(22)["TestDrawnDivisor"]   # seed 22: no divisor of 0 drawn
    assert drawn and all(r.status == "pass" for r in drawn if r.check == "output")
