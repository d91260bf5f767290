"""The unconfirmed verdict (harness/judging/unconfirmed.py): its report (counted apart, never a failure)
and the NaN oracle (the op's dependency structure) on toy ops: a NaN where nothing reaches
is confirmed against the op, the reference's NaN there is the reference's error, a NaN moved
among the outputs it reaches is unconfirmed, a NaN that vanishes stays the caller's failure."""
from __future__ import annotations

import io

import numpy as np

from harness.judging.unconfirmed import SETTLE, nonfinite_verdict, unconfirm
from harness.reporting.report import CheckResult
from harness.executing.pool import OpReport
from opkit.cli.table import render_plain

X = np.arange(1.0, 7.0).reshape(1, 6)


def _nan_at(k):
    x = X.copy()
    x[0, k] = np.nan
    return x


def _pool_windows(x):            # each window of 2 on its own
    return x.reshape(1, 3, 2).mean(-1)


def _pool_matrix(x):             # a product with a 0/1 window matrix: NaN spreads
    w = np.kron(np.eye(3), np.ones((2, 1))) / 2
    return x @ w


def _verdict(op, ref, k=5):
    x = _nan_at(k)
    return nonfinite_verdict({"X": X}, {"X": x}, {"Out": ref(x)}, {"Out": op(x)},
                             lambda ins: {"Out": op(ins["X"])})


def test_op_spreading_nan_is_confirmed():
    kind, text = _verdict(_pool_matrix, _pool_windows)
    assert kind == "fail" and "Out[0, 0]" in text


def test_reference_spreading_nan_is_the_reference_error():
    kind, _ = _verdict(_pool_windows, _pool_matrix)
    assert kind == "reference"


def test_exclusive_scan_reference_is_wrong_where_the_op_excludes_the_nan():
    def op(x):
        out = np.zeros_like(x)
        out[:, 1:] = np.cumsum(x[:, :-1], axis=1)
        return out

    kind, _ = _verdict(op, lambda x: np.cumsum(x, axis=1) - x, k=2)
    assert kind == "reference"


def test_nan_moved_by_a_sort_is_unconfirmed():
    def op(x):                                     # NaN last
        return np.take_along_axis(x, np.argsort(-x, -1, kind="stable"), -1)

    def ref(x):                                    # NaN first
        return np.take_along_axis(x, np.argsort(np.where(np.isnan(x), -np.inf, -x), -1,
                                                kind="stable"), -1)
    kind, _ = _verdict(op, ref, k=2)
    assert kind == "moved"


def test_nan_dropped_stays_the_callers_failure():
    kind = _verdict(lambda x: np.fmax.reduce(x, -1, keepdims=True),
                    lambda x: np.maximum.reduce(x, -1, keepdims=True))
    assert kind is None


def test_no_nonfinite_input_no_verdict():
    assert nonfinite_verdict({"X": X}, {"X": X * 2}, {"Out": X}, {"Out": X * 2},
                             lambda ins: {"Out": ins["X"]}) is None


def _report(*statuses):
    results = [CheckResult("output", "pass", "CPU", "float64", "TestA")]
    for s in statuses:
        r = CheckResult("explore", "fail", "CPU", "float64", "TestA", "Out differs")
        results.append(unconfirm(r, "an inference", "declare D.finite()") if s == "u" else r)
    return OpReport("myop", results, ["TestA"])


def test_unconfirmed_is_counted_apart_and_not_a_failure():
    rep = _report("u")
    assert rep.status == "unconfirmed"
    out = io.StringIO()
    render_plain([rep, OpReport("other", [CheckResult("output", "pass", "CPU", "float64",
                                                      "TestB")], ["TestB"])], stream=out)
    text = out.getvalue()
    assert "myop: UNCONFIRMED" in text
    assert "UNCONFIRMED explore" in text and f"{SETTLE} declare D.finite()" in text
    assert text.strip().splitlines()[-1].startswith("2 ops: 1 passed, 0 failed, 0 skipped, "
                                                    "1 unconfirmed")
    assert rep.to_json()["checks"][1]["status"] == "unconfirmed"


def test_a_failure_beside_an_unconfirmed_still_fails():
    assert _report("u", "f").status == "fail"
