"""python -m opkit_paddle.sweep.report: the sweep's counts per op type, every failing result
classified by cause (a new cause inside a pair whose other failures are known is
UNCLASSIFIED, exit 1), and the Markdown / JSON summary a maintainer reads (needs no
Paddle)."""
from __future__ import annotations

import json

import pytest

from opkit_paddle.sweep.report import main, markdown, read_reports, summarize, skip_reason
from opkit_paddle.sweep.triage import TriageError, load

TRIAGE = {
    "bugs": {"41": {"grade": "bug, public API", "title": "atan2's float32 gradient is -inf "
                    "for tiny inputs", "api": "paddle.atan2", "versions": "3.3.1",
                    "expected": "-1.23e30 (float64 computation)",
                    "reproducer": "paddle.grad(paddle.atan2(x, y), x) with x = y = 1e-30"}},
    "contracts": {"top_k ties": "Paddle's order among equal values is its own"},
    "causes": [
        {"op": "atan2", "check": "extremal", "pattern": r"@GRAD\[[^]]*\] is -inf where the oracle",
         "bug": "41"},
        {"op": "top_k", "check": "explore", "pattern": "ties", "contract": "top_k ties"},
    ],
}


def _check(check, status, case="TestA", dtype="float32", message=""):
    return {"check": check, "status": status, "place": "CPU", "dtype": dtype, "case": case,
            "message": message}


def _sweep(path, extra_failure=None, seed=2024):
    atan2 = [_check("output", "pass"), _check("output", "pass", dtype="float64"),
             _check("grad", "pass"), _check("output", "skip", case="TestBF16",
                                               message="/x/test_atan2_op.py:151: TestBF16 is "
                                                       "skipped by its test file: no CUDA"),
             _check("extremal", "fail", message="variant 'extremal' (tiny float inputs): "
                                                "X1@GRAD[0, 0] is -inf where the oracle (the "
                                                "float64 kernel) is finite: -1.2e+30"),
             _check("kinks", "pass"), _check("lod", "skip", message="no LoD input")]
    if extra_failure:
        atan2.append(extra_failure)
    ops = [{"op": "atan2", "status": "fail", "checks": atan2},
           {"op": "top_k", "status": "fail", "checks": [
               _check("output", "pass"), _check("explore", "fail", message="exact halves: ties "
                                                                           "in another order"),
               _check("state", "unconfirmed")]},
           {"op": "gpu_only", "status": "skip", "checks": [
               _check("output", "skip", case="TestG", message="/y/test_g.py:9: TestG is "
                                                             "skipped by its test file: no CUDA")]}]
    path.write_text("opkit test: seed 2024\n" + json.dumps({"ops": ops, "seed": seed}, indent=1))
    return path


def _triage(tmp_path, data=None):
    path = tmp_path / "triage.json"
    path.write_text(json.dumps(TRIAGE if data is None else data))
    return path


def test_counts_per_op_type_and_every_failure_classified(tmp_path):
    s = summarize(read_reports([_sweep(tmp_path / "s.json")]), load(_triage(tmp_path)))
    atan2 = s["per_op"]["atan2"]
    assert atan2["methods"] == {"pass": 3, "fail": 0, "skip": 1}
    assert atan2["checks"] == {"pass": 1, "fail": 1, "unconfirmed": 0, "skip": 1}
    assert atan2["failing"] == {"extremal": ["bug 41"]}
    assert s["per_op"]["top_k"]["checks"]["unconfirmed"] == 1
    assert s["op_types"]["judged_list"] == ["atan2", "top_k"]      # gpu_only judged nothing
    assert s["op_types"]["not_judged"] == ["gpu_only"]
    assert [b["id"] for b in s["bugs"]] == ["41"] and s["bugs"][0]["pairs"] == ["atan2 extremal"]
    assert s["contracts"][0]["pairs"] == ["top_k explore"]
    assert s["skips"][0] == {"reason": "<class> is skipped by its test file: no CUDA",
                             "count": 2}
    assert s["unclassified"] == []


def test_the_markdown_names_what_was_judged_the_bugs_contracts_and_skips(tmp_path):
    s = summarize(read_reports([_sweep(tmp_path / "s.json")]), load(_triage(tmp_path)))
    text = markdown(s)
    assert "**2 op types judged** (of 3 reported" in text
    assert "| 41 | bug, public API | atan2's float32 gradient is -inf for tiny inputs | " \
           "paddle.atan2 | 3.3.1 | -1.23e30 (float64 computation) |" in text
    assert "- **top_k ties** (top_k explore): Paddle's order among equal values" in text
    assert "| 2 | <class> is skipped by its test file: no CUDA |" in text
    assert "| gpu_only (not judged) | 0 / 0 / 1 |" in text
    assert "UNCLASSIFIED" not in text


def test_a_new_cause_inside_a_classified_pair_is_unclassified_and_exits_1(tmp_path, capsys):
    new = _check("extremal", "fail", case="TestB", message="variant 'extremal' (huge float "
                                                          "inputs): Out[0] is nan")
    report = _sweep(tmp_path / "s.json", extra_failure=new)
    md, js = tmp_path / "out.md", tmp_path / "out.json"
    code = main([str(report), "--triage", str(_triage(tmp_path)), "--markdown", str(md),
                 "--json", str(js)])
    assert code == 1
    out = capsys.readouterr().out
    assert "UNCLASSIFIED: atan2 extremal (TestB, float32): variant 'extremal' (huge" in out
    summary = json.loads(js.read_text())
    assert summary["per_op"]["atan2"]["failing"] == {"extremal": ["bug 41", "UNCLASSIFIED"]}
    assert "1 failing result not classified" in md.read_text()
    # the same report with only the known cause: exit 0
    assert main([str(_sweep(tmp_path / "t.json")), "--triage", str(_triage(tmp_path))]) == 0


def test_two_seeds_add_up(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    _sweep(folder / "a.json", seed=1)
    _sweep(folder / "b.json", seed=2)
    s = summarize(read_reports([folder]), load(_triage(tmp_path)))
    assert s["seeds"] == [1, 2] and s["per_op"]["atan2"]["methods"]["pass"] == 6
    assert s["bugs"][0]["results"] == 2


@pytest.mark.parametrize("data, problem", [
    ({"causes": [{"check": "x", "pattern": "(", "contract": "c"}], "contracts": {"c": ""}},
     "pattern '('"),
    ({"causes": [{"check": "x", "pattern": "y", "bug": "9"}]}, "bug '9' is not a key"),
    ({"bugs": {"1": {"grade": "serious"}}}, "'grade' must be one of"),
    ({"causes": [{"check": "x", "pattern": "y"}]}, "exactly one of"),
])
def test_a_broken_triage_file_is_named_and_exits_2(tmp_path, capsys, data, problem):
    with pytest.raises(TriageError, match=problem.replace("(", r"\(").replace("[", r"\[")):
        load(_triage(tmp_path, data))
    code = main([str(_sweep(tmp_path / "s.json")), "--triage", str(_triage(tmp_path, data))])
    assert code == 2 and problem in capsys.readouterr().err


def test_a_file_that_is_no_report_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("Traceback (most recent call last):\n")
    assert main([str(bad), "--triage", str(_triage(tmp_path))]) == 2
    assert "not a report of `opkit test --format json`" in capsys.readouterr().err


def test_skip_reasons_are_grouped_without_what_varies():
    assert skip_reason("/p/test_x.py:12: TestX2 is skipped by its test file: no CUDA") == \
        skip_reason("/q/test_y.py:7: TestYFP16 is skipped by its test file: no CUDA")
    assert skip_reason("out of scope: opkit has no op 'tan'") == \
        "out of scope: opkit has no op '<name>'"
    # an apostrophe is no quote
    assert skip_reason("cannot apply to Paddle's kernel hooks; Paddle's executor has none") \
        == "cannot apply to Paddle's kernel hooks; Paddle's executor has none"
