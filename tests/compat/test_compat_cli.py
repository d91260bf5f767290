"""`opkit compat`: exit codes, text and JSON output."""
from __future__ import annotations

import io
import json
import subprocess
import sys

from checkers.compat import compare, render_text
from compat_helpers import attr, changed, clip, var, write
from opkit.cli.main import main


def files(tmp_path, new):
    return write(tmp_path / "old.json", clip()), write(tmp_path / "new.json", new)


def broken():
    return changed(clip(), lambda d: (d["clip"]["Attrs"]["min"].update(type=0),
                                      d["clip"]["Inputs"].update(Y=var(dispensable=True))))


def test_exit_0_when_compatible(tmp_path, capsys):
    new = changed(clip(), lambda d: d["clip"]["Attrs"].update(k=attr(0, 1)))
    assert main(["compat", *files(tmp_path, new)]) == 0
    out = capsys.readouterr().out
    assert "compatible: no breaking changes (1 note)" in out


def test_exit_0_for_identical(tmp_path, capsys):
    assert main(["compat", *files(tmp_path, clip())]) == 0


def test_exit_1_when_breaking_and_text_grouped_by_op(tmp_path, capsys):
    old, new = files(tmp_path, broken())
    assert main(["compat", old, new]) == 1
    out = capsys.readouterr().out
    assert "\x1b[" not in out                      # not a TTY: plain text
    lines = out.splitlines()
    assert "Breaking changes (1):" in lines
    i = lines.index("Breaking changes (1):")
    assert lines[i + 1] == "  clip"
    assert lines[i + 2] == ("    attr-type-changed: attr 'min' of op 'clip': "
                            "type changed from float to int")
    assert "Notes (1):" in lines
    assert lines[-1].startswith("incompatible: 1 breaking change in 1 op")


def test_json_format_is_only_json(tmp_path, capsys):
    old, new = files(tmp_path, broken())
    assert main(["compat", old, new, "--format", "json"]) == 1
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert set(doc) >= {"breaking", "notes"}
    assert doc["breaking"] == [{
        "op": "clip", "kind": "attr-type-changed", "name": "min", "old": "float", "new": "int",
        "message": "attr 'min' of op 'clip': type changed from float to int"}]
    assert doc["notes"][0]["kind"] == "input-added"
    assert doc["notes"][0]["new"]["dispensable"] is True


def test_json_format_compatible(tmp_path, capsys):
    assert main(["compat", *files(tmp_path, clip()), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"breaking": [], "notes": [], "allowed": []}


def test_color_on_a_terminal_and_plain_with_no_color(monkeypatch):
    report = compare(clip(), broken())
    buf = io.StringIO()
    render_text(report, "a", "b", buf, color=True)
    assert "\x1b[" in buf.getvalue() and "type changed from float to int" in buf.getvalue()

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    monkeypatch.setenv("NO_COLOR", "1")
    render_text(report, "a", "b", tty)
    assert "\x1b[" not in tty.getvalue()
    monkeypatch.delenv("NO_COLOR")
    tty = Tty()
    render_text(report, "a", "b", tty)
    assert "\x1b[" in tty.getvalue()


def test_long_lines_are_not_wrapped(tmp_path, capsys):
    name = "a_very_long_attribute_name_" * 5
    new = changed(clip(), lambda d: d["clip"]["Attrs"].update({name: attr(0)}))
    main(["compat", *files(tmp_path, new)])
    assert any(name in line for line in capsys.readouterr().out.splitlines())


def test_usage_errors(capsys):
    assert main(["compat"]) == 2
    assert main(["compat", "a.json", "b.json", "--format", "xml"]) == 2


def test_checker_imports_no_numpy_and_no_framework():
    code = ("import sys, checkers.compat; "
            "bad = [m for m in ('numpy', 'opkit.framework.registry') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_compat_command_never_loads_numpy(tmp_path):
    old, new = files(tmp_path, broken())
    code = ("import sys; from opkit.cli.main import main; "
            f"rc = main(['compat', {old!r}, {new!r}, '--format', 'json']); "
            "sys.stderr.write(repr([m for m in ('numpy', 'opkit.framework.registry') if m in sys.modules]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stderr.strip().endswith("[]"), proc.stderr
