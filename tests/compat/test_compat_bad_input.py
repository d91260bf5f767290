"""Unreadable input: exit 2, one line naming the file and the JSON path, no traceback."""
from __future__ import annotations

import gzip
import json

import pytest

from checkers.compat import DescError, load_op_descs, loads_op_descs
from compat_helpers import clip, write
from opkit.cli.main import main


def run_compat(capsys, *argv):
    rc = main(["compat", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(rc, out, err, *needles):
    assert rc == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_wrong_type_names_file_and_path(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    data = clip()
    data["clip"]["Attrs"]["min"]["type"] = "float"
    write(tmp_path / "old.json", clip())
    write(tmp_path / "new.json", data)
    rc, out, err = run_compat(capsys, "old.json", "new.json")
    assert_one_line_error(rc, out, err)
    assert err.strip() == ('opkit compat: error: new.json: clip.Attrs.min.type: '
                           'expected an integer, got "float"')


CASES = [
    # (file content, JSON path / text that the message must contain)
    ("{\"clip\": {\"Inputs\": {}", "unexpected end of file"),              # truncated
    ("not json at all", "not valid JSON"),
    ("{\"a\": 1,}", "not valid JSON"),
    ("", "empty file"),
    ("   \n\t", "empty file"),
    ("[1, 2]", "top level: expected a JSON object mapping op types"),
    ("null", "top level: expected a JSON object"),
    ("{\"clip\": []}", "clip: expected an object with Inputs, Outputs and Attrs, got a list"),
    ("{\"clip\": {\"Inputs\": {}, \"Outputs\": {}}}", "clip: missing key 'Attrs'"),
    ("{\"clip\": {\"Inputs\": [], \"Outputs\": {}, \"Attrs\": {}}}", "clip.Inputs: expected an object"),
    ("{\"clip\": {\"Inputs\": {\"X\": true}, \"Outputs\": {}, \"Attrs\": {}}}", "clip.Inputs.X: expected an object of flags, got true"),
    ("{\"clip\": {\"Inputs\": {\"X\": {\"duplicable\": \"no\", \"dispensable\": false, \"intermediate\": false}}, \"Outputs\": {}, \"Attrs\": {}}}",
     'clip.Inputs.X.duplicable: expected a boolean, got "no"'),
    ("{\"clip\": {\"Inputs\": {\"X\": {\"duplicable\": 0, \"dispensable\": false, \"intermediate\": false}}, \"Outputs\": {}, \"Attrs\": {}}}",
     "clip.Inputs.X.duplicable: expected a boolean, got 0"),
    ("{\"clip\": {\"Inputs\": {}, \"Outputs\": {\"Out\": {\"duplicable\": false}}, \"Attrs\": {}}}",
     "clip.Outputs.Out: missing key 'dispensable'"),
    ("{\"clip\": {\"Inputs\": {}, \"Outputs\": {}, \"Attrs\": {\"min\": {\"default_value\": null}}}}",
     "clip.Attrs.min: missing key 'type'"),
    ("{\"clip\": {\"Inputs\": {}, \"Outputs\": {}, \"Attrs\": {\"min\": {\"type\": 1}}}}",
     "clip.Attrs.min: missing key 'default_value'"),
    ("{\"clip\": {\"Inputs\": {}, \"Outputs\": {}, \"Attrs\": {\"min\": {\"type\": true, \"default_value\": null}}}}",
     "clip.Attrs.min.type: expected an integer, got true"),
    ("{\"clip\": {\"Inputs\": {}, \"Outputs\": {}, \"Attrs\": {\"min\": {\"type\": 1.5, \"default_value\": null}}}}",
     "clip.Attrs.min.type: expected an integer, got 1.5"),
    ("{\"clip\": {\"Inputs\": {}, \"Outputs\": {}, \"Attrs\": {\"min\": {\"type\": -1, \"default_value\": null}}}}",
     "clip.Attrs.min.type: expected an AttrType number"),
    ("{\"clip\": {\"Inputs\": {}, \"Outputs\": {}, \"Attrs\": {\"m.n\": {\"type\": 1, \"default_value\": null, \"extra\": 1}}}}",
     'clip.Attrs."m.n".extra: expected a boolean, got 1'),
]


@pytest.mark.parametrize("content,needle", CASES)
def test_bad_content(tmp_path, monkeypatch, capsys, content, needle):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "old.json", clip())
    (tmp_path / "new.json").write_text(content)
    rc, out, err = run_compat(capsys, "old.json", "new.json")
    assert_one_line_error(rc, out, err, "new.json: ", needle)


def test_bad_old_file_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.json").write_text("{")
    write(tmp_path / "new.json", clip())
    assert_one_line_error(*run_compat(capsys, "old.json", "new.json"), "old.json: ")


def test_missing_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "old.json", clip())
    assert_one_line_error(*run_compat(capsys, "old.json", "nope.json"),
                          "nope.json: no such file")


def test_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir.json").mkdir()
    write(tmp_path / "new.json", clip())
    assert_one_line_error(*run_compat(capsys, "dir.json", "new.json"),
                          "dir.json: is a directory")


def test_not_utf8(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.json").write_bytes(b"{\"\xff\xfe\": 1}")
    write(tmp_path / "new.json", clip())
    assert_one_line_error(*run_compat(capsys, "old.json", "new.json"), "not UTF-8")


def test_broken_gzip(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.json.gz").write_bytes(gzip.compress(b"{}")[:8])
    write(tmp_path / "new.json", clip())
    assert_one_line_error(*run_compat(capsys, "old.json.gz", "new.json"),
                          "old.json.gz: not a valid gzip file")


def test_gzip_is_read(tmp_path):
    (tmp_path / "d.json.gz").write_bytes(gzip.compress(json.dumps(clip()).encode()))
    assert load_op_descs(tmp_path / "d.json.gz") == load_op_descs(write(tmp_path / "d.json", clip()))


def test_unknown_keys_are_ignored_and_optional_flags_default_false():
    data = clip()
    data["clip"]["comment"] = "x"
    data["clip"]["Inputs"]["X"]["future_flag"] = [1, 2]
    data["clip"]["Attrs"]["min"]["checker"] = {"gt": 0}
    del data["clip"]["Inputs"]["X"]["extra"], data["clip"]["Inputs"]["X"]["quant"]
    del data["clip"]["Attrs"]["min"]["generated"], data["clip"]["Attrs"]["min"]["extra"]
    assert loads_op_descs(json.dumps(data)) == loads_op_descs(json.dumps(clip()))


def test_nan_and_infinity_defaults_are_read():
    text = '{"o": {"Inputs": {}, "Outputs": {}, "Attrs": {"a": {"type": 1, "default_value": Infinity}}}}'
    assert loads_op_descs(text)["o"]["Attrs"]["a"]["default_value"] == float("inf")


def test_desc_error_parts():
    with pytest.raises(DescError) as info:
        loads_op_descs('{"o": 3}', "x.json")
    assert info.value.label == "x.json" and info.value.json_path == "o"
    assert str(info.value) == "x.json: o: expected an object with Inputs, Outputs and Attrs, got 3"


def test_deeply_nested_json(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.json").write_text("[" * 100000 + "]" * 100000)
    write(tmp_path / "new.json", clip())
    assert_one_line_error(*run_compat(capsys, "old.json", "new.json"), "old.json: ")
