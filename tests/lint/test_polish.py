"""`opkit lint` on odd files: a safe excerpt for binary / undecodable files, and no
SyntaxWarning leaking from the code it parses (it never runs that code)."""
from __future__ import annotations

import warnings

from opkit.cli.main import main


def test_binary_file_excerpt_is_escaped(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "nul_op.py").write_bytes(b"x = 1\x00\x01\n")
    (tmp_path / "latin_op.py").write_bytes(b"y = '\xff\xfe'\n")
    code = main(["lint", "nul_op.py", "latin_op.py"])
    out, _ = capsys.readouterr()
    assert code == 1
    assert out.count("OPK000") == 2, out
    assert "\x00" not in out and "\x01" not in out and "\ufffd" not in out, repr(out)
    assert "x = 1\\x00\\x01" in out, out
    assert "y = '\\xff\\xfe'" in out, out
    out.encode("ascii")         # nothing raw reaches the terminal


def test_linting_code_with_invalid_escapes_emits_no_syntax_warning(tmp_path, monkeypatch,
                                                                   capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "esc_op.py").write_text('import re\nPAT = re.compile("\\d+")\nx = 1 is 1\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        main(["lint", "esc_op.py"])
    capsys.readouterr()
    assert not [w for w in caught if issubclass(w.category, (SyntaxWarning, DeprecationWarning))], \
        [str(w.message) for w in caught]
