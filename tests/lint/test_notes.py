"""OPK009 analysis-stopped: where OPK001/OPK004 stop following an input, a note names the
line and the reason; off by default, on with `notes = true` or an explicit `--select`."""
from __future__ import annotations

import pytest

from checkers.lint.config import ConfigError, build_config
from opkit.cli.main import main
from .helpers import kernel, lint

UNKNOWN_LIB = kernel("import scipy.special\ny = scipy.special.expit(ctx.input('X'))\n"
                     "ctx.set_output('Out', y)")


def notes(code: str, **table) -> list:
    return [f for f in lint(code, dedent=False, **table).findings if f.rule == "OPK009"]


def test_off_by_default_on_with_the_setting():
    assert notes(UNKNOWN_LIB) == []
    got = notes(UNKNOWN_LIB, notes=True)
    assert len(got) == 1 and "scipy.special.expit" in got[0].message and "'X'" in got[0].message
    assert got[0].line == UNKNOWN_LIB.splitlines().index("    y = scipy.special.expit(ctx.input('X'))") + 1


def test_explicit_select_turns_it_on_all_does_not():
    assert build_config({"select": ["OPK009"]}, None).select >= {"OPK009"}
    assert "OPK009" in build_config({}, None, select=["analysis-stopped"]).select
    assert "OPK009" not in build_config({"select": ["ALL"]}, None).select
    assert "OPK009" not in build_config({}, None).select
    assert "OPK009" in build_config({"notes": True, "select": ["ALL"]}, None).select
    with pytest.raises(ConfigError, match="notes"):
        build_config({"notes": "yes"}, None)


@pytest.mark.parametrize("body,extra,reason", [
    ("x = ctx.input('X')\ny = x[ctx.attr('k')]\nctx.set_output('Out', y * 2)", "", "index of unknown kind"),
    ("f = ctx.attr('fn')\nf(ctx.input('X'))\nctx.set_output('Out', np.zeros(1))", "", "cannot follow"),
    ("_g(*ctx.attr('p'), ctx.input('X'))", "def _g(a, b):\n    return a\n", "of unknown length"),
    ("_g(**ctx.attr('p'), x=ctx.input('X'))", "def _g(**kw):\n    return 1\n", "of unknown keys"),
    ("def _g(a, b):\n    return a\n_g(*ctx.attr('p'), ctx.input('X'))", "", "`*`/`**` arguments"),
])
def test_each_stop_is_a_note(body, extra, reason):
    got = notes(kernel(body, extra=extra), notes=True)
    assert got and reason in got[0].message, got


@pytest.mark.parametrize("body", [
    "x = ctx.input('X')\nctx.set_output('Out', np.maximum(x, 0) + x[0] + x[:, 1:].sum())",
    "x = ctx.input('X')\nenforce(x.ndim == 2, 'X must be 2-D')\nprint(len(x))\n"
    "ctx.set_output('Out', x.copy())",
])
def test_followed_code_has_no_note(body):
    assert notes(kernel(body), notes=True) == []


def test_cli_setting_and_exit_status(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.opkit.lint]\n")
    (tmp_path / "k_op.py").write_text(UNKNOWN_LIB)
    assert main(["lint", "--no-cache", "--select", "OPK001,OPK004", "k_op.py"]) == 0
    assert main(["lint", "--no-cache", "--select", "OPK009", "k_op.py"]) == 1
    assert "OPK009" in capsys.readouterr().out
    (tmp_path / "pyproject.toml").write_text("[tool.opkit.lint]\nnotes = 1\n")
    assert main(["lint", "k_op.py"]) == 2


def test_cache_sees_a_changed_imported_helper(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.opkit.lint]\nselect = ['OPK001']\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "h.py").write_text("def f(a):\n    return a * 2\n")
    (tmp_path / "k_op.py").write_text(kernel("y = f(ctx.input('X'))\nctx.set_output('Out', y)",
                                             extra="from lib.h import f\n"))
    assert main(["lint", "k_op.py"]) == 0
    assert main(["lint", "k_op.py"]) == 0  # served from the cache
    (tmp_path / "lib" / "h.py").write_text("def f(a):\n    a *= 2\n    return a.copy()\n")
    assert main(["lint", "k_op.py"]) == 1  # the helper changed: analysed again
    assert "in helper 'f (lib/h.py)'" in capsys.readouterr().out
