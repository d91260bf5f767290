"""`documented` and `undocumented-change` (op versions in dumps), JSON only."""
import copy
import json

import pytest

from checkers.compat import DescError, apply_versions, compare, loads_op_descs
from compat_helpers import attr, clip

from opkit.cli.main import main


def versioned(data, *checkpoints):
    """`data` with an OpVersion on every op; `checkpoints` go to clip."""
    data = copy.deepcopy(data)
    for op, desc in data.items():
        cps = list(checkpoints) if op == "clip" else []
        desc["OpVersion"] = {"version": len(cps), "checkpoints": cps}
    return data


def cp(note, *changes, upgrader=False):
    return {"note": note, "upgrader": upgrader,
            "changes": [dict(zip(("type", "name", "remark", "default"), c)) for c in changes]}


def run(old, new, require=False):
    o, n = loads_op_descs(json.dumps(old), "old"), loads_op_descs(json.dumps(new), "new")
    return apply_versions(compare(o, n), o, n, require)


def with_new_attr(data):
    data = copy.deepcopy(data)
    data["clip"]["Attrs"]["k"] = attr(0, 3)
    return data


def test_change_covered_by_newer_checkpoint_is_documented():
    old = versioned(clip())
    new = versioned(with_new_attr(clip()), cp("k added", ("new_attr", "k", "the k", 3)))
    r = run(old, new)
    assert r.breaking == []
    (note,) = r.notes
    assert note["kind"] == "documented" and note["change"] == "attr-added"
    assert note["version"] == 1 and "k added" in note["message"]


def test_breaking_change_covered_is_a_documented_note_that_names_the_upgrader():
    old = versioned(clip())
    new = copy.deepcopy(clip())
    del new["clip"]["Attrs"]["eps"]
    new = versioned(new, cp("eps gone", ("delete_attr", "eps", "unused"), upgrader=True))
    r = run(old, new)
    assert r.breaking == []
    (note,) = r.notes
    assert note["kind"] == "documented" and note["change"] == "attr-deleted"
    assert note["upgrader"] is True and "upgrader" in note["message"]


def test_change_without_checkpoint_is_undocumented_note_or_breaking_with_flag():
    old = versioned(clip())
    new = versioned(with_new_attr(clip()))
    r = run(old, new)
    assert r.breaking == []
    kinds = sorted(n["kind"] for n in r.notes)
    assert kinds == ["attr-added", "undocumented-change"]
    r = run(old, new, require=True)
    assert [b["kind"] for b in r.breaking] == ["undocumented-change"]
    assert r.breaking[0]["change"] == "attr-added" and "'clip'" in r.breaking[0]["message"]


def test_checkpoint_already_in_old_does_not_document_a_new_change():
    c1 = cp("k planned", ("new_attr", "k", "the k", 3))
    old = versioned(clip(), c1)
    new = versioned(with_new_attr(clip()), c1)
    r = run(old, new)
    assert "documented" not in {n["kind"] for n in r.notes}
    assert "undocumented-change" in {n["kind"] for n in r.notes}


def test_wrong_name_or_type_does_not_document():
    old = versioned(clip())
    new = versioned(with_new_attr(clip()), cp("x", ("new_attr", "other", "o", 1),
                                              ("delete_attr", "k", "wrong kind")))
    r = run(old, new, require=True)
    assert [b["kind"] for b in r.breaking] == ["undocumented-change"]


def test_breaking_change_undocumented_stays_breaking():
    old = versioned(clip())
    new = copy.deepcopy(clip())
    new["clip"]["Attrs"]["eps"]["default_value"] = 0.5
    r = run(old, versioned(new))
    assert [b["kind"] for b in r.breaking] == ["attr-default-changed"]
    assert [n["kind"] for n in r.notes] == ["undocumented-change"]


def test_version_going_back_is_reported():
    c1 = cp("a", ("bugfix_with_behavior_changed", None, "fixed"))
    r = run(versioned(clip(), c1), versioned(clip()))
    (note,) = r.notes
    assert note["kind"] == "undocumented-change" and "from 1 to 0" in note["message"]


def test_dumps_without_versions_give_no_version_findings():
    new = with_new_attr(clip())
    r = run(clip(), new, require=True)
    assert r.breaking == [] and [n["kind"] for n in r.notes] == ["attr-added"]


@pytest.mark.parametrize("bad, where", [
    ({"version": 2, "checkpoints": []}, "clip.OpVersion.version: version 2 but 0"),
    ({"version": "1", "checkpoints": []}, "clip.OpVersion.version: expected an integer"),
    ({"version": 1, "checkpoints": [{"changes": []}]}, "clip.OpVersion.checkpoints[0]: "
                                                        "missing key 'note'"),
    ({"version": 1, "checkpoints": [{"note": "n", "changes": [{"type": "rename",
                                                               "remark": "r"}]}]},
     "clip.OpVersion.checkpoints[0].changes[0].type: unknown change type"),
    ({"checkpoints": []}, "clip.OpVersion: missing key 'version'"),
])
def test_malformed_op_version_is_named(bad, where):
    data = clip()
    data["clip"]["OpVersion"] = bad
    with pytest.raises(DescError) as info:
        loads_op_descs(json.dumps(data), "f.json")
    assert str(info.value).startswith("f.json: " + where)


def test_cli_require_checkpoints_exit_codes(tmp_path, capsys):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(versioned(clip())))
    new.write_text(json.dumps(versioned(with_new_attr(clip()))))
    assert main(["compat", str(old), str(new)]) == 0
    capsys.readouterr()
    assert main(["compat", str(old), str(new), "--require-checkpoints", "--format",
                 "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [b["kind"] for b in out["breaking"]] == ["undocumented-change"]


def test_allow_list_may_approve_undocumented_change(tmp_path, capsys):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(versioned(clip())))
    new.write_text(json.dumps(versioned(with_new_attr(clip()))))
    allow = tmp_path / "allow.toml"
    allow.write_text('[[allow]]\nop = "clip"\nkind = "undocumented-change"\nname = "k"\n'
                     'reason = "checkpoint comes in the next release"\n')
    assert main(["compat", str(old), str(new), "--require-checkpoints", "--allow",
                 str(allow)]) == 0
