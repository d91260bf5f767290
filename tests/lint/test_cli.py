"""`opkit lint` end to end (in process): formats, exit codes, config, fix, cache, files."""
from __future__ import annotations

import json
import textwrap

import pytest

from opkit.cli.main import main
from .helpers import kernel

BAD = kernel("x = ctx.input('X')\nx[0] = 1")
GOOD = kernel("x = ctx.input('X').copy()\nx[0] = 1\nctx.set_output('Out', x)")
FIXABLE = ("class Op:\n    def get_expected_kernel_type(self, ctx):\n"
           "        return ctx.input('X').dtype\n")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "bad_op.py").write_text(BAD)
    (tmp_path / "ops" / "good_op.py").write_text(GOOD)
    return tmp_path


def lint(capsys, *args):
    code = main(["lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_codes_and_text(project, capsys):
    code, out, _ = lint(capsys, "ops/good_op.py")
    assert code == 0 and "All clear" in out
    code, out, _ = lint(capsys, "ops")
    assert code == 1
    assert "ops/bad_op.py:" in out and "OPK001 input-mutation" in out
    assert "        x[0] = 1\n        ^\n" in out  # source line and caret
    assert "\x1b[" not in out  # plain when not a TTY


def test_no_paths_means_current_folder(project, capsys):
    code, out, _ = lint(capsys)
    assert code == 1 and "bad_op.py" in out


def test_json_is_exactly_the_document(project, capsys):
    code, out, _ = lint(capsys, "--format", "json", "ops")
    data = json.loads(out)
    assert code == 1 and len(data) == 1
    assert {"path", "line", "col", "rule", "name", "message"} <= set(data[0])
    assert data[0]["path"] == "ops/bad_op.py" and data[0]["rule"] == "OPK001"
    assert data[0]["name"] == "input-mutation"
    code, out, _ = lint(capsys, "--format", "json", "ops/good_op.py")
    assert (code, json.loads(out)) == (0, [])


def test_sarif(project, capsys):
    code, out, _ = lint(capsys, "--format", "sarif", "ops")
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["OPK001"]["name"] == "input-mutation"
    assert rules["OPK001"]["shortDescription"]["text"] and rules["OPK001"]["helpUri"]
    assert rules["OPK001"]["fullDescription"]["text"]
    (result,) = run["results"]
    assert result["ruleId"] == "OPK001"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] > 1 and region["startColumn"] >= 1


def test_github(project, capsys):
    code, out, _ = lint(capsys, "--format", "github", "ops")
    assert code == 1
    line = out.strip()
    assert line.startswith("::error file=ops/bad_op.py,line=")
    assert ",title=OPK001 input-mutation::kernel 'k' writes to input 'X'" in line


def test_usage_errors(project, capsys):
    code, _, err = lint(capsys, "missing.py")
    assert code == 2 and "missing.py" in err and len(err.strip().splitlines()) == 1
    code, _, err = lint(capsys, "--select", "OPK042")
    assert code == 2 and "OPK042" in err
    (project / "pyproject.toml").write_text("[tool.opkit.lint]\nselct = ['OPK001']\n")
    code, _, err = lint(capsys, "ops")
    assert code == 2 and "pyproject.toml" in err and "'selct'" in err
    (project / "pyproject.toml").write_text("[tool.opkit.lint]\nmin-message-length = 'x'\n")
    code, _, err = lint(capsys, "ops")
    assert code == 2 and "min-message-length" in err
    (project / "pyproject.toml").write_text("[tool.opkit.lint]\nignore = ['NOPE1']\n")
    code, _, err = lint(capsys, "ops")
    assert code == 2 and "NOPE1" in err and "Traceback" not in err


def test_config_select_ignore_per_file_and_exclude(project, capsys):
    (project / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.opkit.lint]
        exclude = ["vendored"]
        per-file-ignores = {"ops/bad_*.py" = ["OPK001"]}
    """))
    (project / "vendored").mkdir()
    (project / "vendored" / "x_op.py").write_text(BAD)
    (project / "build").mkdir()
    (project / "build" / "y_op.py").write_text(BAD)
    code, out, _ = lint(capsys)
    assert code == 0, out
    # an excluded file named on the command line (as pre-commit does) stays excluded
    code, out, _ = lint(capsys, "vendored/x_op.py")
    assert code == 0
    (project / "pyproject.toml").write_text("[tool.opkit.lint]\nignore = ['OPK001']\n")
    assert lint(capsys, "ops")[0] == 0
    assert lint(capsys, "--select", "OPK001", "--isolated", "ops")[0] == 1


def test_flags_select_ignore(project, capsys):
    assert lint(capsys, "--ignore", "OPK001", "ops")[0] == 0
    assert lint(capsys, "--select", "OPK002,OPK003", "ops")[0] == 0
    assert lint(capsys, "--select", "OPK001", "ops")[0] == 1


def test_never_modifies_without_fix_and_fix_diff(project, capsys):
    path = project / "ops" / "dtype_op.py"
    path.write_text(FIXABLE)
    code, out, _ = lint(capsys, "ops/dtype_op.py")
    assert code == 1 and path.read_text() == FIXABLE
    code, out, _ = lint(capsys, "--fix", "--diff", "ops/dtype_op.py")
    assert code == 1 and "+        return self.indicate_var_data_type(ctx, 'X')" in out
    assert path.read_text() == FIXABLE
    code, out, err = lint(capsys, "--fix", "ops/dtype_op.py")
    assert code == 0, out
    assert "self.indicate_var_data_type(ctx, 'X')" in path.read_text()
    assert lint(capsys, "ops/dtype_op.py")[0] == 0


def test_syntax_error_file_does_not_stop_the_others(project, capsys):
    (project / "ops" / "broken_op.py").write_text("def f(:\n")
    code, out, _ = lint(capsys, "--format", "json", "ops")
    rules = sorted(f["rule"] for f in json.loads(out))
    assert code == 1 and rules == ["OPK000", "OPK001"]


def test_cache_is_used_and_keyed_by_content_and_config(project, capsys, monkeypatch):
    assert lint(capsys, "ops")[0] == 1
    cache_files = list((project / ".opkit_cache" / "lint").glob("*.json"))
    assert len(cache_files) == 1
    import checkers.lint.engine as engine

    calls = []
    real = engine.lint_source
    monkeypatch.setattr(engine, "lint_source", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    code, out, _ = lint(capsys, "ops")
    assert code == 1 and calls == [] and "bad_op.py" in out  # warm: nothing analysed
    (project / "ops" / "bad_op.py").write_text(GOOD)
    assert lint(capsys, "ops")[0] == 0 and calls == ["ops/bad_op.py"]
    calls.clear()
    lint(capsys, "--select", "OPK002", "ops")  # other configuration: other cache
    assert len(calls) == 2
    calls.clear()
    lint(capsys, "--no-cache", "ops")
    assert len(calls) == 2


def test_parallel_jobs_give_the_same_findings(project, capsys):
    for i in range(12):
        (project / "ops" / f"m{i}_op.py").write_text(BAD if i % 2 else GOOD)
    _, serial, _ = lint(capsys, "--no-cache", "--jobs", "1", "--format", "json", "ops")
    _, parallel, _ = lint(capsys, "--no-cache", "--jobs", "2", "--format", "json", "ops")
    assert json.loads(serial) == json.loads(parallel) and len(json.loads(serial)) == 7
