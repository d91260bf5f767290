"""benchmarks/paddle_overlap_seeds.py diff: two runs' JSONs are identical or the differences
(status, and message with --messages) are listed with exit 1; a file that is not such a
JSON exits 2 (needs no Paddle)."""
from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _seeds():
    spec = importlib.util.spec_from_file_location(
        "paddle_overlap_seeds", ROOT / "benchmarks" / "paddle_overlap_seeds.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _result(op, check, status, message=""):
    return {"op": op, "check": check, "place": "CPU", "dtype": "float64", "case": f"Test{op}",
            "status": status, "message": message, "worst_error": None}


DOC = {"seeds": [2024, 1], "ops": ["relu", "tanh"], "runs": {
    "2024": {"exit": 0, "seconds": 3.0, "results": [_result("relu", "grad", "pass"),
                                                    _result("tanh", "grad", "pass")]},
    "1": {"exit": 0, "seconds": 2.0, "results": [_result("relu", "grad", "pass"),
                                                 _result("tanh", "grad", "pass", "note")]}}}


def test_identical_runs_and_every_kind_of_difference(tmp_path, capsys):
    seeds = _seeds()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(DOC))
    other = copy.deepcopy(DOC)
    other["runs"]["2024"]["seconds"] = 99.0            # timings are never compared
    b.write_text(json.dumps(other))
    assert seeds.diff(a, b, messages=True) == 0
    assert "identical" in capsys.readouterr().out

    other["runs"]["1"]["results"][0]["status"] = "fail"
    other["runs"]["1"]["results"][1]["message"] = "changed"
    b.write_text(json.dumps(other))
    assert seeds.diff(a, b) == 1
    out = capsys.readouterr().out
    assert "STATUS ('1', 'relu', 'grad', 'CPU', 'float64', 'Testrelu', 1): pass -> fail" in out
    assert "MESSAGE" not in out                         # messages only with --messages
    assert seeds.diff(a, b, messages=True) == 1
    assert "'note' -> 'changed'" in capsys.readouterr().out

    del other["runs"]["2024"]["results"][1]
    b.write_text(json.dumps(other))
    assert seeds.diff(a, b) == 1
    assert "GONE ('2024', 'tanh', 'grad'" in capsys.readouterr().out


def test_a_file_that_is_not_a_seeds_json_exits_2(tmp_path, capsys):
    seeds = _seeds()
    a, bad = tmp_path / "a.json", tmp_path / "bad.json"
    a.write_text(json.dumps(DOC))
    bad.write_text("{}")
    assert seeds.diff(a, bad) == 2
    assert "not a paddle_overlap_seeds JSON" in capsys.readouterr().err
