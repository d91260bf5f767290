"""The front doors of opkit: bad input on every command is a usage error (exit 2, one clear
line, no traceback, a JSON document on stdout with --format json), `[tool.opkit]` is validated
in the library, and `opkit test` gives no false greens (broken test files, unregistered
op_type, ops without OpTest or without gradient test, places that cannot run)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from harness_test_helpers import ROOT


def run(*args, cwd=ROOT, env=None, timeout=1800):
    full_env = dict(os.environ, NO_COLOR="1")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "opkit", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=full_env)


def assert_usage_error(p, *words, json_doc=False):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)
    if json_doc:
        doc = json.loads(p.stdout)
        assert doc["exit_code"] == 2 and all(w in doc["error"] for w in words), doc
    return p


def project(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.opkit]\n"
                                             + textwrap.dedent(table))
    return tmp_path


# -- usage errors: opkit test ---------------------------------------------------------------
@pytest.mark.parametrize("args, env, words", [
    (["relu"], {"OPKIT_SEED": "abc"}, ["OPKIT_SEED", "abc"]),
    (["relu"], {"OPKIT_SEED": "-3"}, ["OPKIT_SEED", ">= 0"]),
    (["relu", "--seed", "-1"], {}, ["--seed -1"]),
    (["relu", "--timeout", "-5"], {}, ["--timeout -5"]),
    (["relu", "--timeout", "nan"], {}, ["--timeout nan"]),
    (["relu", "--timeout", "inf"], {}, ["--timeout inf"]),
    (["relu"], {"OPKIT_PLACE": "bogus"}, ["OPKIT_PLACE=bogus", "unknown place"]),
    (["relu"], {"OPKIT_DTYPE": "int8"}, ["OPKIT_DTYPE=int8", "unknown dtype"]),
    (["--all", "relu"], {}, ["--all", "relu"]),
    (["relu", "--checks", "fuzz", "--fuzz", "0"], {}, ["--checks fuzz", "--fuzz N"]),
    (["relu", "--checks", "output", "--fuzz", "5"], {}, ["--fuzz 5", "--checks output"]),
    (["relu", "--checks", "bogus"], {}, ["bogus"]),
    (["relu", "--jobs", "-1"], {}, ["--jobs -1"]),
    (["relu", "--builtins"], {}, ["--builtins"]),
    (["relu", "--ops", "/nonexistent"], {}, ["--ops /nonexistent", "no such file"]),
    (["relu", "--shard", "3/2"], {}, ["--shard"]),
    (["relu", "--bogus-flag"], {}, ["--bogus-flag"]),
])
def test_test_usage_errors(args, env, words):
    assert_usage_error(run("test", *args, env=env), *words)
    assert_usage_error(run("test", *args, "--format", "json", env=env), *words, json_doc=True)


def test_ops_folder_without_python_files(tmp_path):
    (tmp_path / "empty").mkdir()
    for command in ("test", "ops", "dump"):
        args = ["--ops", tmp_path / "empty"] + (["relu"] if command == "test" else [])
        assert_usage_error(run(command, *args), "holds no Python files")


def test_module_errors_name_the_file_and_line(tmp_path):
    (tmp_path / "bad_op.py").write_text("import numpy\n\nraise RuntimeError('boom')\n")
    p = assert_usage_error(run("ops", "--ops", tmp_path / "bad_op.py"), "boom")
    assert "bad_op.py:3" in p.stderr


# -- [tool.opkit] is validated (library: opkit.project) ------------------------------------
@pytest.mark.parametrize("table, words", [
    ("ops = [5]\n", ["[tool.opkit] ops", "list of strings"]),
    ("ops = \"my_ops\"\n", ["[tool.opkit] ops", "list of strings"]),
    ("tests = [5]\n", ["[tool.opkit] tests", "list of strings"]),
    ("opps = [\"x\"]\n", ["[tool.opkit] opps", "unknown key"]),
    ("builtin-tests = \"yes\"\n", ["builtin-tests", "true or false"]),
    ("[tool.opkit.exempt]\nwhile = 3\n", ["exempt.while", "reason"]),
    ("lint = 3\n", ["[tool.opkit.lint]", "table"]),
])
@pytest.mark.parametrize("command", ["test", "ops", "dump"])
def test_pyproject_errors(tmp_path, table, words, command):
    project(tmp_path, table)
    args = ["relu"] if command == "test" else []
    p = assert_usage_error(run(command, *args, cwd=tmp_path), *words)
    assert str(tmp_path / "pyproject.toml") in p.stderr


def test_pyproject_ops_entry_is_blamed_on_pyproject(tmp_path):
    project(tmp_path, 'ops = ["no_such_module_xyz"]\n')
    p = assert_usage_error(run("ops", cwd=tmp_path), "[tool.opkit] ops entry",
                           "no_such_module_xyz")
    assert "--ops" not in p.stderr


def test_project_loader_is_the_library_one(tmp_path):
    from opkit.project import ProjectError, load_project

    project(tmp_path, 'ops = ["my_ops"]\ntests = ["t"]\n[tool.opkit.exempt]\nfoo = "why"\n')
    got = load_project(tmp_path)
    assert got.ops == ["my_ops"] and got.test_paths() == [tmp_path / "t"]
    assert got.exempt == {"foo": "why"}
    project(tmp_path, "ops = [5]\n")
    with pytest.raises(ProjectError, match="ops"):
        load_project(tmp_path)


def test_library_modules_do_not_import_the_cli():
    import ast

    for rel in ("harness/selecting/discovery.py", "harness/executing/zygote.py", "harness/pytest_plugin.py",
                "opkit/project.py"):
        tree = ast.parse((ROOT / rel).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("opkit.cli"), (rel, node.module)
                if node.module == "harness.executing.pool":
                    private = [a.name for a in node.names if a.name.startswith("_")]
                    assert not private, (rel, private)


# -- other commands -------------------------------------------------------------------------
def test_no_arguments_is_a_usage_error_on_stderr():
    p = run()
    assert p.returncode == 2 and p.stdout == "" and "commands:" in p.stderr


@pytest.mark.parametrize("command", ["test", "lint", "dump", "compat", "ops"])
def test_help_states_exit_codes(command):
    p = run(command, "--help")
    assert p.returncode == 0 and "exit status:" in p.stdout and "  2  usage error" in p.stdout


def test_unknown_command_json():
    assert_usage_error(run("nope", "--format", "json"), "unknown command", json_doc=True)


def test_dump_format_text_says_it_writes_json():
    p = run("dump", "--format", "text")        # accepted (every command takes text|json)
    assert p.returncode == 0 and "clip" in json.loads(p.stdout)
    assert "JSON only" in p.stderr


def test_lint_refuses_non_python_files_and_diff_without_fix(tmp_path):
    (tmp_path / "notes.txt").write_text("\x00\x01 not python (\n")
    assert_usage_error(run("lint", "--no-cache", tmp_path / "notes.txt"), "not a Python file")
    (tmp_path / "a.py").write_text("x = 1\n")
    assert_usage_error(run("lint", "--no-cache", "--diff", tmp_path / "a.py"),
                       "--diff goes with --fix")
    p = run("lint", "--no-cache", "--fix", "--diff", tmp_path / "a.py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr


# -- output ---------------------------------------------------------------------------------
def test_compact_output_and_verbose():
    p = run("test", "relu", "clip")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0].startswith("relu: PASS (") and lines[1].startswith("clip: PASS (")
    assert lines[-1].startswith("2 ops: 2 passed, 0 failed, 0 skipped")
    assert len(lines) == 3
    full = run("test", "relu", "-v").stdout
    assert "worst error" in full and "determinism" in full


def test_heartbeat_off_a_terminal():
    from opkit.cli import table

    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    try:
        with table.heartbeat(5, "opkit test", every=0.05) as advance:
            advance()
            import time

            time.sleep(0.3)
    finally:
        os.dup2(saved, 2)
        os.close(w)
    text = os.read(r, 10000).decode()
    os.close(r)
    assert "opkit test: 1/5 tasks done" in text   # says what it counts


def test_failing_op_gets_a_table_and_summary():
    p = run("test", "--ops", "tests/broken_ops", "--tests", "tests/broken_ops",
            "broken_mutate_scale", "good_sign_relu")
    assert p.returncode == 1
    assert "broken_mutate_scale: FAIL" in p.stdout and "worst error" in p.stdout
    assert "good_sign_relu: PASS (" in p.stdout
    assert "2 ops: 1 passed, 1 failed" in p.stdout


# -- no false greens ------------------------------------------------------------------------
OP_FILE = '''
import numpy as np
from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator


class TwiceOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) output.")
        self.add_comment("Out = 2 X")


class TwiceOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("{name}", TwiceOp, TwiceOpMaker)


@register_kernel("{name}")
def kernel(ctx):
    ctx.set_output("Out", 2 * ctx.input("X"))
'''

TEST_FILE = '''
import numpy as np
from harness import OpTest


class Test{cls}(OpTest):
    def setUp(self):
        self.op_type = "{op}"
        x = np.random.uniform(-1, 1, (3, 4))
        self.inputs = {{"X": x}}
        self.attrs = {{}}
        self.outputs = {{"Out": 2 * x}}

    def test_check_output(self):
        self.check_output()
'''


@pytest.fixture
def user_project(tmp_path):
    ops = tmp_path / "my_ops"
    ops.mkdir()
    (ops / "twice_op.py").write_text(OP_FILE.format(name="fx_twice"))
    (ops / "thrice_op.py").write_text(OP_FILE.format(name="fx_untested"))
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_twice_op.py").write_text(TEST_FILE.format(cls="Twice", op="fx_twice"))
    project(tmp_path, 'ops = ["my_ops"]\ntests = ["tests"]\n')
    return tmp_path


def _doc(p):
    doc = json.loads(p.stdout)
    return {op["op"]: op for op in doc["ops"]}


def test_all_tests_the_users_ops_only_and_fails_untested(user_project):
    p = run("test", "--all", "--format", "json", "--checks", "output,dtypes",
            cwd=user_project)
    ops = _doc(p)
    assert set(ops) == {"fx_twice", "fx_untested"}, ops.keys()
    assert ops["fx_twice"]["status"] == "pass"
    assert ops["fx_untested"]["status"] == "fail"
    assert "no OpTest found for op 'fx_untested'" in ops["fx_untested"]["checks"][0]["message"]
    assert p.returncode == 1


def test_exempt_ops_are_counted_apart(user_project):
    with open(user_project / "pyproject.toml", "a") as f:
        f.write('[tool.opkit.exempt]\nfx_untested = "a generated alias of fx_twice"\n')
    p = run("test", "--all", "--checks", "output,dtypes", cwd=user_project)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "fx_untested: EXEMPT (a generated alias of fx_twice)" in p.stdout
    assert "2 ops: 1 passed, 0 failed, 0 skipped, 1 exempt" in p.stdout
    doc = _doc(run("test", "--all", "--format", "json", "--checks", "output",
                   cwd=user_project))
    assert doc["fx_untested"]["status"] == "skip" and doc["fx_untested"]["exempt"]


def test_builtins_only_when_asked(user_project):
    p = run("test", "--all", "--builtins", "--format", "json", "--checks", "dtypes",
            "--jobs", "2", cwd=user_project, timeout=1800)
    ops = _doc(p)
    assert {"fx_twice", "relu", "clip"} <= set(ops)
    assert ops["relu"]["status"] == "pass"


def test_broken_test_file_fails_with_file_and_line(user_project):
    (user_project / "tests" / "test_fx_untested_op.py").write_text("x = 1\ndef broken(:\n")
    p = run("test", "--all", "--format", "json", "--checks", "output", cwd=user_project)
    assert p.returncode == 1
    ops = _doc(p)
    msgs = [c["message"] for c in ops["fx_untested"]["checks"] if c["status"] == "fail"]
    assert any("test_fx_untested_op.py:2" in m and "SyntaxError" in m for m in msgs), msgs
    # named: the op fails (not "no OpTest found")
    p = run("test", "fx_untested", "--checks", "output", cwd=user_project)
    assert p.returncode == 1 and "test_fx_untested_op.py:2" in p.stdout, p.stdout + p.stderr


def test_unregistered_op_type_fails_with_file_and_line(user_project):
    (user_project / "tests" / "test_typo_op.py").write_text(
        TEST_FILE.format(cls="Typo", op="fx_twise"))
    for args in ([], ["--all"]):
        p = run("test", *args, "--format", "json", "--checks", "output", cwd=user_project)
        assert p.returncode == 1, p.stderr
        msgs = [c["message"] for c in _doc(p)["fx_twise"]["checks"]]
        assert any("test_typo_op.py:6" in m and "not registered" in m for m in msgs), msgs


def test_no_gradient_test_fails_grad_unless_opted_out(tmp_path):
    from harness.reporting.report import PASS, SKIP, CheckResult
    from harness.api import NO_GRADIENT_TEST, lacks_gradient_test

    class WithoutGrad:
        pass

    class OptedOut:
        opkit_skip = {"grad": "integer-valued op"}

    class WithGrad:
        pass

    never = CheckResult("grad", SKIP, "", "", "WithoutGrad",
                        "WithoutGrad never calls check_grad()")
    checked = CheckResult("grad", PASS, "CPU", "float64", "WithGrad", "")
    # decided from what ran: the results, not the source text
    assert lacks_gradient_test("relu", [WithoutGrad], [never])
    assert not lacks_gradient_test("relu", [WithoutGrad, WithGrad], [never, checked])
    assert not lacks_gradient_test("relu", [OptedOut], [])
    assert not lacks_gradient_test("fill_constant", [WithoutGrad], [never])   # no grad op
    # a class whose methods never ran (setUp raised): cannot tell, no accusation
    assert not lacks_gradient_test("relu", [WithoutGrad, WithGrad], [never])
    # end to end: relu's OpTest without check_grad
    (tmp_path / "test_relu_nograd.py").write_text(TEST_FILE.format(cls="ReluNoGrad", op="relu")
                                                  .replace("2 * x", "np.maximum(x, 0)"))
    p = run("test", "relu", "--tests", tmp_path, "--format", "json")
    grads = [c for c in _doc(p)["relu"]["checks"] if c["check"] == "grad"]
    assert p.returncode == 1 and any(NO_GRADIENT_TEST in c["message"] for c in grads), grads


def test_unusable_place_is_skip_never_pass():
    p = run("test", "relu", "--place", "GPU", env={"OPKIT_NO_GPU": "1"})
    assert p.returncode == 0, p.stderr
    assert "relu: SKIP" in p.stdout and "PASS" not in p.stdout
    assert "nothing ran: GPU asked for but not usable" in p.stdout
    assert "0 passed, 0 failed, 1 skipped" in p.stdout


def test_pytest_place_gpu_is_skipped_not_passed():
    env = dict(os.environ, OPKIT_NO_GPU="1")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
                        "-p", "no:randomly", "reference_ops/tests/test_relu_op.py",
                        "--opkit-place", "GPU", "-rs", "--opkit-check-items"],
                       cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env)
    assert "passed" not in p.stdout.splitlines()[-1], p.stdout
    assert "skipped" in p.stdout and "GPU asked for but not usable" in p.stdout, p.stdout
    from harness.pytest_plugin import check_item_names

    n = 2 + len(check_item_names())      # the 2 OpTest methods + one item per check
    assert f"SKIPPED [{n}]" in p.stdout, p.stdout


# -- one root cause, one block ---------------------------------------------------------------
def test_one_root_cause_gives_one_block():
    from harness.reporting.messages import group_failures
    from harness.reporting.report import CheckResult

    results = []
    for check in ("output", "grad", "mutation", "aliasing", "determinism"):
        for place, dtype in (("CPU", "float32"), ("CPU", "float64")):
            for case in ("TestA", "TestB"):
                results.append(CheckResult(check, "fail", place, dtype, case,
                                           "raised InvalidArgument: X must be 2-D",
                                           kind="uncaught"))   # grouped by kind, not text
    for dtype in ("float32", "float64"):
        for case in ("TestA", "TestB"):
            results.append(CheckResult("lod", "fail", "CPU", dtype, f"{case}/empty_first",
                                       f"an empty sequence: Out: LoD (lengths) [], the "
                                       f"reference gives [[0, {len(case)}]]"))
    lines = group_failures(results)
    assert len(lines) == 2, lines
    raised = lines[0]
    assert raised.count("X must be 2-D") == 1 and "could not run" in raised
    assert "output, grad, mutation, aliasing, determinism" in raised
    assert "(4 times)" in lines[1] and "lod" in lines[1]
    # distinct causes stay apart
    two = group_failures([CheckResult("grad", "fail", "CPU", "float32", "T", "X: wrong sign"),
                          CheckResult("mutation", "fail", "CPU", "float32", "T",
                                      "kernel wrote to X")])
    assert len(two) == 2


def test_broken_mutating_op_prints_one_block_not_a_line_per_combination():
    p = run("test", "--ops", "tests/broken_ops", "--tests", "tests/broken_ops",
            "broken_mutate_scale")
    fails = [ln for ln in p.stdout.splitlines() if ln.strip().startswith("FAIL")]
    # the written input is one block over every place and dtype; `indistinguishable` reports
    # what it does to the next calls (the outputs drift) in a block of its own
    written = [ln for ln in fails if "mutation" in ln]
    assert p.returncode == 1 and len(written) == 1, p.stdout
    assert {ln.split()[1].rstrip(",") for ln in fails} <= {"mutation", "indistinguishable"}, \
        p.stdout


def test_lint_fix_diff_shows_changes_and_exits_1(tmp_path):
    src = ("from opkit import OperatorWithKernel\n\n\nclass FooOp(OperatorWithKernel):\n"
           "    def get_expected_kernel_type(self, ctx):\n"
           "        return ctx.input(\"X\").dtype\n")
    (tmp_path / "foo_op.py").write_text(src)
    p = run("lint", "--no-cache", "--isolated", "--select", "OPK005", "--fix", "--diff",
            "foo_op.py", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "indicate_var_data_type" in p.stdout and "All clear" not in p.stdout
    assert (tmp_path / "foo_op.py").read_text() == src      # nothing written


NO_OP_TYPE = """
import numpy as np
from harness import OpTest


class TestNothingToRun(OpTest):          # a base or leftover class: no op_type, no test
    def _set_op_type(self):
        self.op_type = "fx_twice"


class TestForgotOpType(OpTest):
    def setUp(self):
        self.inputs = {"X": np.ones((2, 3))}

    def test_check_output(self):
        self.check_output()
"""


def test_class_without_op_type_fails_only_if_it_has_a_test(user_project):
    """A class with no op_type and no test method runs nothing under unittest or pytest
    (Paddle's test_split_op.py has one): not a failure. One with a test method fails."""
    (user_project / "tests" / "test_no_op_type.py").write_text(NO_OP_TYPE)
    p = run("test", "--all", "--format", "json", "--checks", "output", cwd=user_project)
    assert p.returncode == 1
    failed = [c for op in json.loads(p.stdout)["ops"] for c in op["checks"]
              if c["status"] == "fail"]
    named = [c for c in failed if c["case"]]      # (fx_untested fails apart: no OpTest)
    assert [c["case"] for c in named] == ["TestForgotOpType"], failed
    assert "has no op_type" in named[0]["message"]


def test_checks_subset_still_knows_what_the_optest_differentiates():
    """`--checks precision` alone: the OpTest's check_grad arguments are recorded (not run),
    so the float32 gradient computed in float16 is still found."""
    p = run("test", "--ops", "tests/broken_ops", "--tests", "tests/broken_ops",
            "broken_f16_tanh", "good_f16_tanh", "--checks", "precision", "--format", "json")
    status = {op["op"]: op["status"] for op in json.loads(p.stdout)["ops"]}
    assert status == {"broken_f16_tanh": "fail", "good_f16_tanh": "pass"}, p.stdout[-2000:]


def test_precision_bound_holds_for_a_cancelling_pool_gradient():
    """avg pool2d's gradient sums cotangents that can cancel to a small value, rounded in
    float32 at the size of the terms: no false alarm (seed 5 gave one before the gradient's
    term size entered the bound)."""
    p = run("test", "pool2d", "--seed", "5", "--checks", "precision")
    assert p.returncode == 0, p.stdout[-3000:]
