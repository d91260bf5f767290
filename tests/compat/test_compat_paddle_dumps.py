"""Two real dumps written by PaddlePaddle's own print_op_desc.py (2.6.2 and 3.3.1).

Generated with data/print_paddle_op_desc.py in throwaway virtual environments
(`pip install paddlepaddle==2.6.2` / `==3.3.1`); paddle is not a dependency of opkit.
"""
from __future__ import annotations

from pathlib import Path

from checkers.compat import compare, load_op_descs, text_report
from opkit.cli.main import main

DATA = Path(__file__).parent / "data"
OLD = DATA / "paddle-2.6.2.json.gz"
NEW = DATA / "paddle-3.3.1.json.gz"


def kinds(entries):
    return {(e["kind"], e["op"], e["name"]) for e in entries}


def test_real_dumps_load():
    old, new = load_op_descs(OLD), load_op_descs(NEW)
    assert len(old) == 784 and len(new) == 764
    assert old["clip"]["Attrs"]["min"]["type"] == 1


def test_real_dump_against_itself_is_empty():
    old = load_op_descs(OLD)
    report = compare(old, load_op_descs(OLD))
    assert report.breaking == [] and report.notes == []


def test_real_dumps_compare_and_report():
    # how fast: benchmarks/compat_speed.py (no verdict of the suite rests on speed)
    report = compare(load_op_descs(OLD), load_op_descs(NEW))
    text = text_report(report)
    assert "histogram" in text, text[:2000]


def test_known_changes_between_paddle_2_6_and_3_3():
    report = compare(load_op_descs(OLD), load_op_descs(NEW))
    breaking, notes = kinds(report.breaking), kinds(report.notes)
    assert ("attr-type-changed", "histogram", "min") in breaking
    assert ("attr-added", "adam", "amsgrad") in notes
    assert ("op-deleted", "c_allreduce_sum", "c_allreduce_sum") in breaking
    assert ("attr-added-no-default", "multi_encoder_xpu", "max_pos_len") in breaking
    assert ("input-flag-changed", "fc_xpu", "w_max") in notes          # dispensable relaxed
    # float32 defaults printed in double precision compare equal to themselves
    assert not any(e["kind"] == "attr-default-changed" and e["op"] == "adam"
                   for e in report.breaking)
    assert len(report.breaking) > 100 and len(report.notes) > 100


def test_cli_on_gzip_dumps(capsys):
    assert main(["compat", str(OLD), str(NEW), "--format", "json"]) == 1
    assert main(["compat", str(NEW), str(NEW)]) == 0
