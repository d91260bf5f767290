"""--allow FILE: approved breaks, expiry, bad allow files."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from checkers.compat import DescError, apply_allow, compare, load_allow
from compat_helpers import changed, clip, write
from opkit.cli.main import main

TODAY = dt.date(2025, 6, 1)


def broken():
    return changed(clip(), lambda d: (d["clip"]["Attrs"]["min"].update(type=0),
                                      d["clip"]["Attrs"].pop("max"),
                                      d["clip"]["Inputs"]["X"].update(duplicable=True)))


def allow_toml(tmp_path, body: str):
    p = tmp_path / "allow.toml"
    p.write_text(body)
    return p


def test_toml_entry_silences_a_break(tmp_path):
    entries = load_allow(allow_toml(tmp_path, '''
[[allow]]
op = "clip"
kind = "attr-type-changed"
name = "min"
reason = "min is an int since #12"
expires = 2025-12-31
'''))
    report = apply_allow(compare(clip(), broken()), entries, TODAY)
    assert [e["kind"] for e in report.breaking] == ["input-flag-changed", "attr-deleted"]
    assert report.allowed[0]["name"] == "min"
    assert report.allowed[0]["reason"] == "min is an int since #12"
    assert report.allowed[0]["expires"] == "2025-12-31"
    assert report.notes == []


def test_expiry_day_itself_still_counts(tmp_path):
    entries = load_allow(allow_toml(tmp_path, '[[allow]]\nop = "clip"\nkind = "attr-deleted"\n'
                                              'name = "max"\nreason = "r"\nexpires = "2025-06-01"\n'))
    report = apply_allow(compare(clip(), broken()), entries, TODAY)
    assert [e["name"] for e in report.allowed] == ["max"]


def test_expired_entry_stops_silencing_and_is_reported(tmp_path):
    entries = load_allow(allow_toml(tmp_path, '[[allow]]\nop = "clip"\nkind = "attr-deleted"\n'
                                              'name = "max"\nreason = "old"\nexpires = 2025-05-31\n'))
    report = apply_allow(compare(clip(), broken()), entries, TODAY)
    assert "attr-deleted" in [e["kind"] for e in report.breaking]
    assert report.allowed == []
    (note,) = report.notes
    assert note["kind"] == "allow-expired" and note["op"] == "clip" and note["name"] == "max"
    assert "expired on 2025-05-31" in note["message"] and "counts again" in note["message"]
    assert "allow.toml: allow[0]" in note["message"]


def test_json_allow_list_and_unused_entries(tmp_path):
    p = tmp_path / "allow.json"
    p.write_text(json.dumps({"allow": [
        {"op": "clip", "kind": "input-flag-changed", "name": "X", "field": "duplicable",
         "reason": "r"},
        {"op": "clip", "kind": "input-flag-changed", "name": "X", "field": "dispensable",
         "reason": "never matches"},
        {"op": "relu", "kind": "op-deleted", "reason": "gone", "expires": "2000-01-01"}]}))
    report = apply_allow(compare(clip(), broken()), load_allow(p), TODAY)
    assert [e["kind"] for e in report.allowed] == ["input-flag-changed"]
    kinds = sorted((n["kind"], n["op"]) for n in report.notes)
    assert kinds == [("allow-expired", "relu"), ("allow-unused", "clip")]


def test_entry_without_name_covers_every_name(tmp_path):
    p = tmp_path / "allow.json"
    p.write_text(json.dumps([{"op": "clip", "kind": "attr-deleted", "reason": "r"}]))
    new = changed(clip(), lambda d: (d["clip"]["Attrs"].pop("max"), d["clip"]["Attrs"].pop("min")))
    report = apply_allow(compare(clip(), new), load_allow(p), TODAY)
    assert report.breaking == [] and len(report.allowed) == 2


def test_cli_allow_exit_codes_and_json(tmp_path, capsys):
    old, new = write(tmp_path / "old.json", clip()), write(tmp_path / "new.json", broken())
    allow = allow_toml(tmp_path, "".join(
        f'[[allow]]\nop = "clip"\nkind = "{k}"\nname = "{n}"\nreason = "ok"\n'
        f'expires = 2999-01-01\n\n'
        for k, n in (("attr-type-changed", "min"), ("attr-deleted", "max"),
                     ("input-flag-changed", "X"))))
    assert main(["compat", old, new, "--allow", str(allow)]) == 0
    assert "Approved breaks (--allow) (3):" in capsys.readouterr().out
    assert main(["compat", old, new, "--allow", str(allow), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["breaking"] == [] and len(doc["allowed"]) == 3


def test_cli_expired_entry_fails_again(tmp_path, capsys):
    old = write(tmp_path / "old.json", clip())
    new = write(tmp_path / "new.json", changed(clip(), lambda d: d["clip"]["Attrs"].pop("max")))
    allow = allow_toml(tmp_path, '[[allow]]\nop = "clip"\nkind = "attr-deleted"\nname = "max"\n'
                                 'reason = "temporary"\nexpires = 2001-01-01\n')
    assert main(["compat", old, new, "--allow", str(allow)]) == 1
    out = capsys.readouterr().out
    assert "allow-expired" in out and "expired on 2001-01-01" in out


BAD = [
    ("allow.toml", "[[allow]\n", "not valid TOML"),
    ("allow.toml", 'allow = "x"\n', "allow: expected a list of entries"),
    ("allow.toml", 'other = 1\n', "missing key 'allow'"),
    ("allow.toml", '[[allow]]\nkind = "attr-deleted"\nreason = "r"\n', "allow[0]: missing key 'op'"),
    ("allow.toml", '[[allow]]\nop = "a"\nkind = "attr-delted"\nreason = "r"\n',
     "allow[0].kind: unknown breaking kind 'attr-delted'"),
    ("allow.toml", '[[allow]]\nop = "a"\nkind = "op-added"\nreason = "r"\n',
     "allow[0].kind: unknown breaking kind 'op-added'"),
    ("allow.toml", '[[allow]]\nop = "a"\nkind = "attr-deleted"\n', "allow[0]: missing key 'reason'"),
    ("allow.toml", '[[allow]]\nop = "a"\nkind = "attr-deleted"\nreason = " "\n',
     "allow[0].reason: expected a non-empty string"),
    ("allow.toml", '[[allow]]\nop = "a"\nkind = "attr-deleted"\nreason = "r"\nexpires = "soon"\n',
     'allow[0].expires: expected a date YYYY-MM-DD, got "soon"'),
    ("allow.toml", '[[allow]]\nop = "a"\nkind = "attr-deleted"\nreason = "r"\nexpires = 10:00:00\n',
     "allow[0].expires: expected a date YYYY-MM-DD"),
    ("allow.toml", '[[allow]]\nop = "a"\nkind = "attr-deleted"\nreason = "r"\nexpire = 2020-01-01\n',
     "allow[0].expire: unknown key"),
    ("allow.toml", '[[allow]]\nop = "a"\nkind = "input-flag-changed"\nfield = "color"\nreason = "r"\n',
     "allow[0].field: unknown flag 'color'"),
    ("allow.json", '[{"op": "a", "kind": "attr-deleted", "reason": "r"}, 3]', "[1]: expected an object"),
    ("allow.json", '{"allow": [', "not valid JSON"),
    ("allow.json", '', "empty file"),
]


@pytest.mark.parametrize("name,body,needle", BAD)
def test_bad_allow_files(tmp_path, monkeypatch, capsys, name, body, needle):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "old.json", clip())
    write(tmp_path / "new.json", clip())
    (tmp_path / name).write_text(body)
    rc = main(["compat", "old.json", "new.json", "--allow", name])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert f"{name}: " in err and needle in err, err


def test_missing_allow_file(tmp_path, capsys):
    old, new = write(tmp_path / "old.json", clip()), write(tmp_path / "new.json", clip())
    assert main(["compat", old, new, "--allow", str(tmp_path / "none.toml")]) == 2
    assert "none.toml: no such file" in capsys.readouterr().err


def test_load_allow_error_type(tmp_path):
    with pytest.raises(DescError):
        load_allow(allow_toml(tmp_path, "allow = 3\n"))
