"""OPK003's `low-precision-pairs` option ([tool.opkit.lint], off by default): a float16
kernel without its bfloat16 twin (or the reverse) is reported only when the project asks."""
from __future__ import annotations

import pytest

from opkit.cli.main import main

HALF_ONLY = ("from opkit import register_kernel\n\n"
             "@register_kernel('relu', dtypes=('float32', 'float64', 'float16'))\n"
             "def relu_kernel(ctx):\n    pass\n")
BOTH = HALF_ONLY.replace("'float16')", "'float16', 'bfloat16')")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "relu_op.py").write_text(HALF_ONLY)
    return tmp_path


def lint(capsys, *args):
    code = main(["lint", "--no-cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_off_by_default(project, capsys):
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    code, out, _ = lint(capsys, "ops")
    assert code == 0, out


def test_asked_for_reports_the_missing_twin(project, capsys):
    (project / "pyproject.toml").write_text("[tool.opkit.lint]\nlow-precision-pairs = true\n")
    code, out, _ = lint(capsys, "ops")
    assert code == 1
    assert "OPK003" in out and "float16 kernel without its bfloat16 twin" in out
    (project / "ops" / "relu_op.py").write_text(BOTH)
    assert lint(capsys, "ops")[0] == 0


def test_a_bad_value_is_a_usage_error_naming_the_key(project, capsys):
    (project / "pyproject.toml").write_text("[tool.opkit.lint]\nlow-precision-pairs = 'yes'\n")
    code, out, err = lint(capsys, "ops")
    assert code == 2
    assert "low-precision-pairs" in out + err and "Traceback" not in out + err
