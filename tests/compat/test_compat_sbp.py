"""opkit compat on declared parallel signatures (SbpSignatures): sbp-removed breaks,
sbp-added is a note, Paddle dumps (no OpVersion, no SbpSignatures) give nothing."""
from __future__ import annotations

import json

import pytest

from checkers.compat import DescError, compare, loads_op_descs
from compat_helpers import changed, clip, write
from opkit.cli.main import main

SIGS = {"clip": ["for i in axes(X): Out:S(i) X:S(i)"],
        "clip_grad": ["Out@GRAD:P X:B X@GRAD:P",
                      "for i in axes(Out@GRAD): Out@GRAD:S(i) X:S(i) X@GRAD:S(i)"]}


def opkit_clip(sigs=None) -> dict:
    d = clip()
    d["clip"]["OpVersion"] = {"version": 0, "checkpoints": []}
    if sigs is not None:
        d["clip"]["SbpSignatures"] = json.loads(json.dumps(sigs))
    return d


def norm(d):
    return loads_op_descs(json.dumps(d))


def test_removed_signature_breaks_and_added_one_is_a_note():
    new_sigs = {"clip": SIGS["clip"] + ["Out:P X:P"], "clip_grad": SIGS["clip_grad"][1:]}
    report = compare(norm(opkit_clip(SIGS)), norm(opkit_clip(new_sigs)))
    assert [(e["kind"], e["name"], e["old"]) for e in report.breaking] == [
        ("sbp-removed", "clip_grad", "Out@GRAD:P X:B X@GRAD:P")]
    assert "grad op of 'clip'" in report.breaking[0]["message"]
    assert [(e["kind"], e["name"], e["new"]) for e in report.notes] == [
        ("sbp-added", "clip", "Out:P X:P")]


def test_same_signatures_in_another_order_are_no_change():
    shuffled = {k: list(reversed(v)) for k, v in SIGS.items()}
    report = compare(norm(opkit_clip(SIGS)), norm(opkit_clip(shuffled)))
    assert not report.breaking and not report.notes


def test_first_declaration_is_notes_and_dropping_all_breaks():
    first = compare(norm(opkit_clip()), norm(opkit_clip(SIGS)))
    assert {e["kind"] for e in first.notes} == {"sbp-added"} and len(first.notes) == 3
    assert not first.breaking
    dropped = compare(norm(opkit_clip(SIGS)), norm(opkit_clip()))
    assert [e["kind"] for e in dropped.breaking] == ["sbp-removed"] * 3


def test_paddle_dump_on_either_side_gives_no_sbp_findings():
    paddle = clip()     # no OpVersion, no SbpSignatures
    for old, new in ((paddle, opkit_clip(SIGS)), (opkit_clip(SIGS), paddle)):
        report = compare(norm(old), norm(new))
        assert not [e for e in report.breaking + report.notes if e["kind"].startswith("sbp")]


@pytest.mark.parametrize("bad, where", [
    (["not", "an", "object"], "SbpSignatures"),
    ({"clip": "X:S(0)"}, "clip"),
    ({"clip": [""]}, "clip"),
])
def test_malformed_section_is_a_desc_error(bad, where):
    d = changed(opkit_clip(), lambda x: x["clip"].update(SbpSignatures=bad))
    with pytest.raises(DescError) as err:
        norm(d)
    assert where in str(err.value)


def test_cli_exit_codes(tmp_path, capsys):
    old = write(tmp_path / "old.json", opkit_clip(SIGS))
    new = write(tmp_path / "new.json", opkit_clip({"clip": SIGS["clip"]}))
    assert main(["compat", old, new, "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {e["kind"] for e in doc["breaking"]} == {"sbp-removed"}
    assert main(["compat", new, old, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {e["kind"] for e in doc["notes"]} == {"sbp-added"}


def test_allow_list_accepts_sbp_removed(tmp_path, capsys):
    old = write(tmp_path / "old.json", opkit_clip(SIGS))
    new = write(tmp_path / "new.json", opkit_clip({"clip": SIGS["clip"]}))
    allow = tmp_path / "allow.toml"
    allow.write_text('[[allow]]\nop = "clip"\nkind = "sbp-removed"\nreason = "r"\n')
    assert main(["compat", old, new, "--allow", str(allow)]) == 0


def test_opkit_dump_writes_the_builtin_declarations():
    from opkit.op_desc import dump_op_descs

    descs = dump_op_descs()
    assert descs["leaky_relu"]["SbpSignatures"] == {
        "leaky_relu": ["for i in axes(X): Out:S(i) X:S(i)"],
        "leaky_relu_grad": ["Out@GRAD:P X:B X@GRAD:P",
                            "for i in axes(Out@GRAD): Out@GRAD:S(i) X:S(i) X@GRAD:S(i)"]}
    assert "SbpSignatures" not in descs["accuracy"]      # declares none
    assert compare(norm(descs), norm(descs)).ok
