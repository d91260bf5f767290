"""`opkit lint` on C++ sources end to end (in process): the same CLI, formats, config,
suppressions, cache and exit codes as for Python."""
from __future__ import annotations

import json

import pytest

from checkers.lint.cpp.printf import has_words, strip_conversions
from opkit.cli.main import main

BAD_CC = ('void Check(int a, int b) {\n'
          '  PADDLE_ENFORCE_EQ(a, b);\n'
          '}\n'
          'REGISTER_OP_CPU_KERNEL(\n'
          '    cos_sim, ops::CosSimKernel<paddle::platform::CPUDeviceContext, float>);\n')
GOOD_CC = ('void Check(int a, int b) {\n'
           '  PADDLE_ENFORCE_EQ(a, b, platform::errors::InvalidArgument("a (%d) != b (%d)", a, b));\n'
           '}\n')


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    ops = tmp_path / "paddle" / "fluid" / "operators"
    ops.mkdir(parents=True)
    (ops / "cos_sim_op.cc").write_text(BAD_CC)
    (ops / "clip_op.h").write_text(GOOD_CC)
    (ops / "notes.txt").write_text("not code\n")
    return tmp_path


def lint(capsys, *args):
    code = main(["lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_folder_finds_cpp_files_and_reports_lines(project, capsys):
    code, out, _ = lint(capsys, "paddle")
    assert code == 1
    assert "paddle/fluid/operators/cos_sim_op.cc:2:3: OPK002 empty-enforce-message" in out
    assert "cos_sim_op.cc:4:1: OPK003 missing-float-double-kernel" in out
    assert "clip_op.h" not in out and "notes.txt" not in out
    assert "2 checked" in out


def test_clean_file_exits_zero(project, capsys):
    code, out, _ = lint(capsys, "paddle/fluid/operators/clip_op.h")
    assert code == 0 and "All clear" in out


def test_json_sarif_github(project, capsys):
    code, out, _ = lint(capsys, "--format", "json", "paddle")
    findings = json.loads(out)
    assert code == 1 and {(f["rule"], f["line"]) for f in findings} == {("OPK002", 2), ("OPK003", 4)}
    code, out, _ = lint(capsys, "--format", "sarif", "paddle")
    results = json.loads(out)["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"OPK002", "OPK003"}
    code, out, _ = lint(capsys, "--format", "github", "paddle")
    assert "::error file=paddle/fluid/operators/cos_sim_op.cc,line=2," in out


def test_not_a_source_file_is_a_usage_error(project, capsys):
    code, _, err = lint(capsys, "paddle/fluid/operators/notes.txt")
    assert code == 2
    assert err.strip().count("\n") == 0 and "notes.txt: not a Python file or C++ source" in err


def test_select_ignore_and_per_file_ignores(project, capsys):
    code, out, _ = lint(capsys, "--select", "OPK003", "paddle")
    assert code == 1 and "OPK003" in out and "OPK002" not in out
    code, out, _ = lint(capsys, "--ignore", "OPK002,missing-float-double-kernel", "paddle")
    assert code == 0
    (project / "pyproject.toml").write_text(
        "[tool.opkit.lint]\nper-file-ignores = {'*_op.cc' = ['OPK002']}\n")
    code, out, _ = lint(capsys, "paddle")
    assert code == 1 and "OPK002" not in out and "OPK003" in out


@pytest.mark.parametrize("comment", ["// opkit: ignore[OPK002]", "// opkit: ignore[empty-enforce-message]",
                                     "/* opkit: ignore */", "// opkit: ignore[OPK003, OPK002]"])
def test_suppression_comments(project, capsys, comment):
    path = project / "paddle" / "fluid" / "operators" / "cos_sim_op.cc"
    path.write_text(BAD_CC.replace("PADDLE_ENFORCE_EQ(a, b);", f"PADDLE_ENFORCE_EQ(a, b);  {comment}"))
    code, out, _ = lint(capsys, "--select", "OPK002", "paddle")
    assert code == 0, out


def test_suppression_on_the_last_line_of_a_multi_line_call(project, capsys):
    path = project / "paddle" / "fluid" / "operators" / "cos_sim_op.cc"
    path.write_text("void F(int a, int b) {\n  PADDLE_ENFORCE_EQ(\n      a, b);  // opkit: ignore[OPK002]\n"
                    "  PADDLE_ENFORCE_NE(\n      a, b);  // opkit: ignore[OPK003]\n}\n")
    code, out, _ = lint(capsys, "--select", "OPK002", "paddle")
    assert code == 1 and ":4:3: OPK002" in out and ":2:3:" not in out


def test_a_suppression_in_a_string_is_not_a_comment(project, capsys):
    path = project / "paddle" / "fluid" / "operators" / "cos_sim_op.cc"
    path.write_text('void F(int a) {\n  PADDLE_ENFORCE(a, ""); auto s = "// opkit: ignore";\n}\n')
    code, out, _ = lint(capsys, "--select", "OPK002", "paddle")
    assert code == 1 and ":2:" in out


def test_cache_serves_unchanged_cpp_files(project, capsys, monkeypatch):
    code, first, _ = lint(capsys, "paddle")
    assert code == 1

    def boom(*args, **kwargs):
        raise AssertionError("a cached file was analysed again")

    monkeypatch.setattr("checkers.lint.cpp.engine.lint_cpp", boom)
    code, second, _ = lint(capsys, "paddle")
    assert code == 1 and second == first
    path = project / "paddle" / "fluid" / "operators" / "cos_sim_op.cc"
    path.write_text(GOOD_CC)
    with pytest.raises(AssertionError):  # an edited file is analysed again
        lint(capsys, "paddle")


def test_unparseable_and_binary_files_are_reported_with_the_reason(project, capsys):
    ops = project / "paddle" / "fluid" / "operators"
    (ops / "garbage.cc").write_text("PADDLE_ENFORCE ] ] ) ) : : ? ? ] ] ) ) : : ] ] ) )\n")
    (ops / "blob.cu").write_bytes(b"PADDLE_ENFORCE\n\0\x01\x02")
    code, out, _ = lint(capsys, "--select", "OPK000", "paddle")
    assert code == 1
    assert "garbage.cc:1:1: OPK000 syntax-error unparseable C++" in out
    assert "blob.cu:2:1: OPK000 syntax-error not C++ source: the file contains NUL bytes" in out


def test_a_partial_parse_still_checks_the_rest(project, capsys):
    path = project / "paddle" / "fluid" / "operators" / "cos_sim_op.cc"
    path.write_text("void F(int a) {\n  x = = = ;\n}\nvoid G(int a) {\n  PADDLE_ENFORCE(a);\n}\n")
    code, out, _ = lint(capsys, "paddle/fluid/operators/cos_sim_op.cc")
    assert code == 1 and ":5:3: OPK002" in out and "OPK000" not in out
    (project / "pyproject.toml").write_text("[tool.opkit.lint]\nnotes = true\n")
    code, out, _ = lint(capsys, "paddle/fluid/operators/cos_sim_op.cc")
    assert ":2:" in out and "OPK009 analysis-stopped" in out


def test_python_and_cpp_in_one_run(project, capsys):
    (project / "relu_op.py").write_text("from opkit import enforce\n\ndef f(x):\n    enforce(x)\n")
    code, out, _ = lint(capsys, ".")
    assert code == 1 and "relu_op.py:4:" in out and "cos_sim_op.cc:2:" in out


def test_one_cpp_file_loads_neither_libcst_nor_numpy(project):
    import subprocess
    import sys

    code = ("import sys\nfrom opkit.cli.main import main\n"
            "rc = main(['lint', '--no-cache', 'paddle/fluid/operators/cos_sim_op.cc'])\n"
            "print(rc, sorted(m for m in ('libcst', 'numpy') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "1 []", out.stdout + out.stderr


@pytest.mark.parametrize("message,words", [("%d", False), ("%d vs %d", True), ("  %s, %5.2f  ", False),
                                           ("100%% done", True), ("%lld > %zu", False),
                                           ("\\n", False), ("rank %d", True)])
def test_message_words(message, words):
    assert has_words(message) is words


def test_strip_conversions_keeps_text():
    assert strip_conversions("a %d b %% c %-8.3lf d") == "a  b  c  d"
