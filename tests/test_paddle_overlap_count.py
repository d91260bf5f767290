"""benchmarks/paddle_overlap.py count: every failing (op, check) pair is named by the triage
file, and an unknown one is listed and makes count exit 1 (needs no Paddle)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _overlap():
    spec = importlib.util.spec_from_file_location("paddle_overlap",
                                                  ROOT / "benchmarks" / "paddle_overlap.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _report(path: Path, op: str, failing: str) -> None:
    checks = [{"check": "output", "status": "pass", "dtype": d} for d in ("float32", "float64")]
    checks.append({"check": failing, "status": "fail", "dtype": "float32"})
    path.write_text("opkit test: seed 1\n" + json.dumps({"ops": [
        {"op": op, "status": "fail", "checks": checks}]}, indent=1))


def test_a_known_failure_is_named_and_an_unknown_one_fails_the_count(tmp_path, capsys):
    overlap = _overlap()
    runs = tmp_path / "runs"
    runs.mkdir()
    _report(runs / "relu.json", "relu", "explore")
    triage = tmp_path / "triage.json"
    triage.write_text(json.dumps({"relu explore": "bug row 4"}))
    assert overlap.count([runs], triage) == 0
    out = capsys.readouterr().out
    assert "relu: fail (explore: bug row 4)" in out
    assert "checks run in float32 and float64: 1 ops" in out

    _report(runs / "tanh.json", "tanh", "grad")
    assert overlap.count([runs], triage) == 1
    assert "UNCLASSIFIED: tanh grad" in capsys.readouterr().out


def test_the_shipped_triage_names_bug_rows_that_exist():
    rows = (ROOT / "docs" / "paddle.md").read_text()
    triage = json.loads((ROOT / "benchmarks" / "paddle_overlap_triage.json").read_text())
    import re

    for pair, word in triage.items():
        for row in re.findall(r"\b(\d+b?)\b", word.split("contract")[0]):
            assert f"\n| {row} |" in rows, (pair, row)
