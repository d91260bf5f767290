"""Without a usable GPU, `-v` shows no pass in a GPU column (a static check such as dtypes'
kernel registry, or a place-free one such as infer_shape, did not run there), a missing GPU
kernel still fails there, and a skip line names its place before the checks."""
from __future__ import annotations

import io

from harness.reporting.report import CheckResult
from harness.executing.pool import OpReport
from opkit.cli.table import render_plain


def _table(results):
    out = io.StringIO()
    render_plain([OpReport("myop", results, ["TestA"])], stream=out, verbose=True)
    rows = {}
    for line in out.getvalue().splitlines():
        cells = line.split()
        if cells and cells[0] in ("dtypes", "infer_shape", "output", "places"):
            rows[cells[0]] = cells[1:5]
    return rows, out.getvalue()


def _results(gpu_dtypes="pass"):
    gone = "GPU not usable: cupy is not installed"
    return [CheckResult("output", "pass", "CPU", "float32", "TestA"),
            CheckResult("output", "pass", "CPU", "float64", "TestA"),
            CheckResult("output", "skip", "GPU", "", "TestA", gone),
            CheckResult("dtypes", "pass", "CPU", "", "TestA", "kernels"),
            CheckResult("dtypes", gpu_dtypes, "GPU", "", "TestA", "kernels"),
            CheckResult("infer_shape", "pass", "", "", "TestA", "agree"),
            CheckResult("places", "skip", "GPU", "", "TestA", gone)]


def test_no_pass_in_a_gpu_column_that_did_not_run():
    rows, _ = _table(_results())
    assert rows["output"] == ["pass", "pass", "skip", "skip"]
    assert rows["dtypes"] == ["pass", "pass", "-", "-"]
    assert rows["infer_shape"] == ["pass", "pass", "-", "-"]


def test_a_missing_gpu_kernel_still_fails_in_the_gpu_column():
    rows, _ = _table(_results(gpu_dtypes="fail"))
    assert rows["dtypes"][2:] == ["fail", "fail"]


def test_skip_line_names_the_place_first():
    _, text = _table(_results())
    assert "skip [GPU] output: GPU not usable: cupy is not installed" in text, text
    assert "skip places: GPU not usable" in text, text
    assert "output [GPU]" not in text and "output, places" not in text
