"""One bug, one block: a forward kernel that sorts its input in place (row_max) breaks a
dozen checks; the report gives one failure block for it, the other checks listed under it
one line each, and no nested error messages. explore's minimal case says what it is."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from harness_test_helpers import ROOT

HERE = ROOT / "tests" / "harness" / "fixtures" / "one_cause"
OPS, TESTS = HERE / "row_max_op.py", HERE / "row_max_optests.py"


def run(*args):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "opkit", "test", "row_max", "--ops", OPS,
                           "--tests", TESTS, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=1800, env=env)


def test_explore_labels_a_case_the_reference_computes_as_one_to_compute():
    p = run("--checks", "explore")
    assert p.returncode == 1, p.stderr
    assert "where reference() computes a result" in p.stdout
    assert "a case the op must refuse" not in p.stdout
    assert "a case the op must compute" in p.stdout


def test_one_bug_gives_one_failure_block():
    p = run()
    assert p.returncode == 1, p.stderr
    text = p.stdout
    blocks = [line for line in text.splitlines() if line.startswith("  FAIL ")]
    assert len(blocks) == 1, "\n".join(blocks)
    assert "row_max_op.py:" in blocks[0]
    failing = {r["check"] for r in json.loads(run("--format", "json").stdout)["ops"][0]["checks"]
               if r["status"] == "fail"}
    assert len(failing) >= 8, failing       # the bug breaks many checks ...
    under = text.split("also failed these checks, one line each:", 1)[1].split("\n  skip", 1)[0]
    for check in failing - {blocks[0].split()[1]}:
        assert check in under, (check, under)   # ... each listed under the one block
    assert text.count("minimal case:") <= 1
    assert "ValueError: External:" not in text and "] External: ValueError" not in text


def _result(check, message, case="TestA"):
    from harness.reporting.report import CheckResult

    return CheckResult(check, "fail", "CPU", "float64", case, message)


def test_two_lines_are_two_causes_even_with_one_error_text():
    from harness.reporting.messages import group_failures

    results = [_result("output", "the op raised IndexError: index 3 is out of bounds "
                                 "(at my_op.py:10: x[3])"),
               _result("grad", "the grad op raised IndexError: index 3 is out of bounds "
                               "(at my_op.py:25: d[3])")]
    blocks = group_failures(results, order=["output", "grad"])
    assert len(blocks) == 2, blocks


def test_one_line_joins_blocks_and_an_error_text_joins_a_lineless_one():
    from harness.reporting.messages import group_failures

    results = [_result("output", "the kernel wrote to Input(X) at my_op.py:10 (x.sort())"),
               _result("mutation", "kernel wrote to Input(X) variable 'X' (read-only) at "
                                   "my_op.py:10 (x.sort())"),
               _result("explore", "the op raised ValueError: External: [operator < f > "
                                  "error] ValueError: sort array is read-only (at "
                                  "my_op.py:10: x.sort())"),
               _result("grad", "the forward op raised ValueError: sort array is read-only"),
               _result("layout", "Out[0, 1]: actual 2, expected 3")]
    blocks = group_failures(results, order=["output", "grad", "mutation", "layout",
                                            "explore"])
    assert len(blocks) == 2, blocks
    first, second = blocks
    assert first.startswith("FAIL output") and "my_op.py:10" in first
    assert all(c in first for c in ("mutation", "explore", "grad"))
    assert "ValueError: External" not in first
    assert second.startswith("FAIL layout")


def test_plain_pytest_tells_the_cause_in_full_once(tmp_path):
    import shutil

    shutil.copy(OPS, tmp_path / "row_max_op.py")
    shutil.copy(TESTS, tmp_path / "test_row_max.py")
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nimport row_max_op  # noqa\n",
        encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", "-p",
                        "no:cacheprovider", "test_row_max.py"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=1800,
                       env=dict(os.environ, NO_COLOR="1"))
    assert p.returncode == 1, p.stdout[-2000:]
    failed = [line for line in p.stdout.splitlines() if line.startswith("FAILED ")
              and "::opkit[" in line]
    assert len(failed) >= 8, p.stdout[-3000:]
    full = [line for line in failed if " - FAIL " in line]     # the others: "the same ..."
    assert len(full) == 1 and "opkit[output]" in full[0], full
    assert p.stdout.count("the same root cause as opkit[output]") >= len(failed) - 1
