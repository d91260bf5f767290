"""`kinks` at a tie between two inputs (X = Y = 0 in Paddle's elementwise_max, x - y = 0 in
dist): the even split is accepted where the op is smooth along moving both elements
together, and only there (tests/broken_ops/tie_breakers_op.py)."""
from __future__ import annotations

import numpy as np


def _kinks(broken_ops, ops):
    from harness.executing.pool import run_ops
    from harness.selecting.discovery import discover

    by_op = discover([str(broken_ops / "test_tie_breakers.py")]).by_op()
    reports = {r.op: r for r in run_ops(ops, by_op, isolate=False, checks=["kinks"])}
    return {op: [r for r in reports[op].results if r.check == "kinks"] for op in ops}


def test_variant_labels_a_shared_value_of_two_inputs_a_tie():
    from harness.backend.case import Case
    from harness.inputs.variants.kinks import derive

    x, y = np.full((2, 3), 0.4), np.full((2, 3), -0.4)
    derived = derive(Case("T", "elementwise_max", {"X": x, "Y": y}, {}, grad_inputs=["X", "Y"]))
    pts = derived.info["points"]
    assert pts["X"][0] == (0, "tie with input Y[0] (both 0)"), pts
    assert ("X", 0, "Y", 0) in derived.info["cross_ties"]
    assert pts["X"][1][1].startswith("tie with element 1")     # the in-input tie is kept


def test_even_split_at_a_tie_passes_and_a_wrong_split_fails(broken_ops):
    got = _kinks(broken_ops, ["good_tie_max", "broken_tie_max"])
    assert got["good_tie_max"] and all(r.status == "pass" for r in got["good_tie_max"]), \
        [(r.status, r.message) for r in got["good_tie_max"]]
    bad = [r for r in got["broken_tie_max"] if r.status == "fail"]
    assert bad and "tie with input Y[0]" in bad[0].message and "0.29" in bad[0].message


def test_half_gradient_where_both_inputs_kink_apart_still_fails(broken_ops):
    got = _kinks(broken_ops, ["good_tie_relu_sum", "broken_tie_relu_sum"])
    assert all(r.status == "pass" for r in got["good_tie_relu_sum"])
    bad = [r for r in got["broken_tie_relu_sum"] if r.status == "fail"]
    assert bad and "neither one-sided slope" in bad[0].message, \
        [(r.status, r.message) for r in got["broken_tie_relu_sum"]]


def test_a_broadcast_input_ties_with_the_element_it_meets():
    from harness.backend.case import Case
    from harness.inputs.variants.kinks import derive

    x, y = np.full((2, 3), 0.4), np.full((3,), -0.4)    # dist-like: y broadcast over rows
    derived = derive(Case("T", "dist", {"X": x, "Y": y}, {"p": 1.5}, grad_inputs=["X", "Y"]))
    # the attr value goes to flat 7 % size: X[0, 1] (flat 1) and Y[1], which meet
    assert ("X", 1, "Y", 1) in derived.info["cross_ties"], derived.info
    assert ("Y", 1, "X", 1) in derived.info["cross_ties"], derived.info
