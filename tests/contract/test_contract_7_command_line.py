"""The public contract, section 7. command line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contract_helpers import CLIP_OP_SOURCE, RULES, json_stdout, run_opkit, write_clip_project


COMMANDS = ("lint", "test", "dump", "compat", "ops")


def test_7_commands_and_formats():
    from opkit.cli.main import COMMANDS as registered

    assert set(COMMANDS) <= set(registered)
    import argparse
    import importlib

    for name in COMMANDS:
        parser = argparse.ArgumentParser()
        importlib.import_module(f"opkit.cli.{name}").add_arguments(parser)
        fmt = next(a for a in parser._actions if "--format" in a.option_strings)
        want = {"text", "json", "sarif", "github"} if name == "lint" else {"text", "json"}
        assert want <= set(fmt.choices), (name, fmt.choices)
        if name in ("test", "dump", "ops"):
            ops = next(a for a in parser._actions if "--ops" in a.option_strings)
            assert isinstance(ops, argparse._AppendAction), name
        if name == "test":
            assert any("--tests" in a.option_strings for a in parser._actions)
            assert any("--all" in a.option_strings for a in parser._actions)
            assert any("--fuzz" in a.option_strings for a in parser._actions)
        if name == "dump":
            assert any("-o" in a.option_strings for a in parser._actions)


def test_7_unknown_command_and_bad_format_exit_2():
    assert run_opkit("no-such-command").returncode == 2
    for name, args in (("ops", ()), ("dump", ()), ("compat", ("a.json", "b.json")),
                       ("test", ("clip",)), ("lint", ("x.py",))):
        assert run_opkit(name, *args, "--format", "xml").returncode == 2, name


LINT_FILE = '''
from opkit import enforce, errors

def check(x):
    enforce(x, "")
    enforce(x, "")  # opkit: ignore[OPK002]
    raise errors.InvalidArgument("")
'''


def test_7_lint_exit_codes_formats_and_ignore(tmp_path):
    (tmp_path / "bad.py").write_text(LINT_FILE)
    (tmp_path / "good.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    lint = ("lint", "--no-cache")
    assert run_opkit(*lint, "good.py", cwd=tmp_path).returncode == 0
    assert run_opkit(*lint, "missing_file.py", cwd=tmp_path).returncode == 2
    p = run_opkit(*lint, "--format", "json", "bad.py", "broken.py", cwd=tmp_path)
    assert p.returncode == 1
    findings = json_stdout(p)
    assert isinstance(findings, list)
    for f in findings:
        assert {"path", "line", "col", "rule", "name", "message"} <= set(f)
    got = sorted((f["path"], f["line"], f["rule"], f["name"]) for f in findings)
    assert got == [("bad.py", 5, "OPK002", "empty-enforce-message"),
                   ("bad.py", 7, "OPK002", "empty-enforce-message"),
                   ("broken.py", 1, "OPK000", "syntax-error")]
    p = run_opkit(*lint, "--format", "text", "bad.py", cwd=tmp_path)
    assert p.returncode == 1 and "OPK002" in p.stdout
    p = run_opkit(*lint, "--format", "sarif", "bad.py", cwd=tmp_path)
    assert p.returncode == 1 and json_stdout(p)["version"] == "2.1.0"
    p = run_opkit(*lint, "--format", "github", "bad.py", cwd=tmp_path)
    assert p.returncode == 1 and p.stdout.startswith("::error ")
    p = run_opkit(*lint, "--format", "json", tmp_path / "good.py", cwd=tmp_path)
    assert p.returncode == 0 and json_stdout(p) == []


def test_7_lint_without_paths_checks_the_current_folder(tmp_path):
    (tmp_path / "bad.py").write_text(LINT_FILE)
    p = run_opkit("lint", "--no-cache", "--format", "json", cwd=tmp_path)
    assert p.returncode == 1 and {f["path"] for f in json_stdout(p)} == {"bad.py"}


def test_7_lint_takes_folders(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(LINT_FILE)
    p = run_opkit("lint", "--no-cache", "--format", "json", "pkg", cwd=tmp_path)
    assert p.returncode == 1 and {f["rule"] for f in json_stdout(p)} == {"OPK002"}


def test_7_ops_command_with_repeatable_ops_option(tmp_path):
    op_file, _ = write_clip_project(tmp_path)
    other = tmp_path / "ops" / "contract_other_op.py"
    other.write_text(CLIP_OP_SOURCE.replace("contract_clip", "contract_other"))
    p = run_opkit("ops", "--ops", op_file, "--ops", other, "--format", "json", cwd=tmp_path)
    assert p.returncode == 0
    rows = {r["op"]: r for r in json_stdout(p)}
    assert {"clip", "contract_clip", "contract_other"} <= set(rows)
    p = run_opkit("ops", "--ops", op_file, "--format", "text", cwd=tmp_path)
    assert p.returncode == 0 and "contract_clip" in p.stdout
    assert run_opkit("ops", "--ops", tmp_path / "nope_op.py").returncode == 2


def test_7_ops_module_names_resolve_from_the_project_folder(tmp_path):
    """`--ops pkg.module` and `[tool.opkit] ops = ["pkg.module"]` import from the project
    folder, also through the `opkit` console script (whose sys.path lacks the cwd)."""
    op_file, _ = write_clip_project(tmp_path)
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "contract_clip_op.py").write_text(op_file.read_text())
    script = Path(sys.executable).parent / "opkit"
    if not script.exists():
        pytest.skip("the opkit console script is not installed next to this Python")
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([str(script), "ops", "--ops", "mypkg.contract_clip_op", "--format",
                        "json"], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=1800)
    assert p.returncode == 0, p.stderr
    assert "contract_clip" in {r["op"] for r in json_stdout(p)}
    (tmp_path / "pyproject.toml").write_text('[tool.opkit]\nops = ["mypkg.contract_clip_op"]\n')
    (tmp_path / "sub").mkdir()
    p = subprocess.run([str(script), "ops", "--format", "json"], cwd=tmp_path / "sub",
                       capture_output=True, text=True, env=env, timeout=1800)
    assert p.returncode == 0, p.stderr
    assert "contract_clip" in {r["op"] for r in json_stdout(p)}


def test_7_pyproject_tool_opkit_ops_and_tests(tmp_path):
    write_clip_project(tmp_path, pyproject=True)
    p = run_opkit("ops", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0 and "contract_clip" in {r["op"] for r in json_stdout(p)}
    p = run_opkit("test", "--checks", "output", "--format", "text", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "contract_clip" in p.stdout


def test_7_dump_exit_codes(tmp_path):
    out = tmp_path / "ops.json"
    p = run_opkit("dump", "-o", out)
    assert p.returncode == 0 and "clip" in json.loads(out.read_text())
    assert run_opkit("dump", "-o", tmp_path / "no" / "such" / "dir.json").returncode == 2
    p = run_opkit("dump", "--format", "text")
    assert p.returncode == 0 and "clip" in json.loads(p.stdout)


def test_7_compat_exit_codes(tmp_path):
    same = {"op": {"Inputs": {}, "Outputs": {}, "Attrs": {}}}
    (tmp_path / "a.json").write_text(json.dumps(same))
    (tmp_path / "b.json").write_text(json.dumps({}))
    (tmp_path / "bad.json").write_text("{not json")
    assert run_opkit("compat", "a.json", "a.json", cwd=tmp_path).returncode == 0
    p = run_opkit("compat", "a.json", "b.json", cwd=tmp_path)
    assert p.returncode == 1 and "op-deleted" in p.stdout
    assert run_opkit("compat", "a.json", "bad.json", cwd=tmp_path).returncode == 2
    assert run_opkit("compat", "a.json", "missing.json", cwd=tmp_path).returncode == 2
    assert run_opkit("compat", "a.json", cwd=tmp_path).returncode == 2


def test_7_test_command_exit_codes(tmp_path):
    op_file, tests = write_clip_project(tmp_path)
    base = ("test", "--ops", op_file, "--tests", tests)
    assert run_opkit(*base, "no_such_op_contract", cwd=tmp_path).returncode == 2
    assert run_opkit("test", cwd=tmp_path).returncode == 2            # nothing to test
    assert run_opkit(*base, "contract_clip", "--checks", "nope", cwd=tmp_path).returncode == 2
    broken = tmp_path / "broken"
    broken.mkdir()
    op_file, tests = write_clip_project(broken, broken_grad=True)
    p = run_opkit("test", "--ops", op_file, "--tests", tests, "contract_clip",
                  "--checks", "output,grad", "--format", "json", cwd=broken)
    assert p.returncode == 1
    (op,) = json_stdout(p)["ops"]
    assert op["op"] == "contract_clip" and op["status"] == "fail"
    assert {c["check"] for c in op["checks"] if c["status"] == "fail"} == {"grad"}


def test_7_test_all_covers_every_forward_op(tmp_path):
    p = run_opkit("test", "--all", "--checks", "dtypes", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    ops = {r["op"]: r for r in json_stdout(p)["ops"]}
    from opkit.registry import all_op_types, op_info

    # the built-in forward ops (this test process may also hold ops other tests registered)
    forward = {t for t in all_op_types() if not t.endswith("_grad") and
               "/reference_ops/" in (op_info(t).source or "").replace("\\", "/")}
    assert set(ops) == forward
    assert all(r["status"] in ("pass", "skip") for r in ops.values())


# The bad op file of tests/lint_fixtures, self-contained: every rule OPK001-OPK008 once.
EVERY_RULE_FILE = '''
import numpy as np
from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator, enforce


class ReluOpMaker(OpMaker):
    def make(self):
        self.add_input("x", "(Tensor) input")  # OPK007
        self.add_output("Out", "(Tensor) output")
                                                # OPK008: no add_comment


class ReluOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "")  # OPK002

    def get_expected_kernel_type(self, ctx):
        return ctx.input("X").dtype  # OPK005


register_operator("relu", ReluOp, ReluOpMaker)
register_operator("gelu", ReluOp)  # OPK006


@register_kernel("relu", dtypes="float32")  # OPK003
def relu_kernel(ctx):
    x = ctx.input("X")
    x[x < 0] = 0  # OPK001
    ctx.set_output("Out", x)  # OPK004
'''


def test_7_lint_every_rule_fires(tmp_path):
    (tmp_path / "relu_op.py").write_text(EVERY_RULE_FILE)
    (tmp_path / "syntax_op.py").write_text("class (:\n")
    p = run_opkit("lint", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    assert p.returncode == 1
    findings = json_stdout(p)
    got = {(f["rule"], f["name"]) for f in findings}
    assert got == set(RULES.items()), got ^ set(RULES.items())
    lines = EVERY_RULE_FILE.splitlines()
    for f in findings:
        if f["rule"] not in ("OPK000", "OPK008"):
            assert f["rule"] in lines[f["line"] - 1], f
    ignored = EVERY_RULE_FILE.replace("x[x < 0] = 0  # OPK001",
                                      "x[x < 0] = 0  # opkit: ignore[OPK001]")
    (tmp_path / "relu_op.py").write_text(ignored)
    (tmp_path / "syntax_op.py").unlink()
    p = run_opkit("lint", "--no-cache", "--format", "json", "relu_op.py", cwd=tmp_path)
    assert "OPK001" not in {f["rule"] for f in json_stdout(p)} and p.returncode == 1
