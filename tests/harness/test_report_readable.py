"""Output worth reading (issue 47): one failure block per root cause across checks (a wrong
gradient, a wrong forward: tests/harness/fixtures/root_cause), a cell reads `pass` only for
what it judged (`pass*`), a minimal case is shrunk and printed short (the whole case in a
file), skipped checks grouped by why, a failure names its kernel function and file:line,
and under pytest an OpTest method's traceback ends in the user's test. Plus the CLI's small
items: a missing --durations file, the --tests hint, no op names against --all, lint's help."""
from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from harness_test_helpers import ROOT

HERE = ROOT / "tests" / "harness" / "fixtures" / "root_cause"
OPS, TESTS = HERE / "softsign_ops.py", HERE / "softsign_optests.py"


def opkit(*args, cwd=ROOT, **env):
    return subprocess.run([sys.executable, "-m", "opkit", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, NO_COLOR="1", **env))


@pytest.fixture(scope="module")
def softsign_run():
    """One text run of the three ops (every check, default fuzz): {op: its section}."""
    p = opkit("test", "good_softsign", "wrong_grad_softsign", "wrong_fwd_softsign",
              "--ops", OPS, "--tests", TESTS)
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    sections = {}
    for part in re.split(r"\n(?=\w+: (?:PASS|FAIL))", p.stdout):
        sections[part.split(":", 1)[0].strip()] = part
    return sections


def _row(section, check):
    return next(line.split() for line in section.splitlines()
                if line.split()[:1] == [check])


def _failing_checks(section):
    rows = [line.split() for line in section.splitlines()
            if line.startswith("  ") and len(line.split()) >= 5]
    return {r[0] for r in rows if "fail" in r[1:5]}


@pytest.mark.parametrize("op, label", [("wrong_grad_softsign", "wrong gradient of X"),
                                       ("wrong_fwd_softsign", "wrong output Out")])
def test_one_bug_one_block_whatever_check_found_it(softsign_run, op, label):
    section = softsign_run[op]
    blocks = [line for line in section.splitlines() if line.startswith("  FAIL ")]
    assert len(blocks) == 1, "\n".join(blocks)
    failing = _failing_checks(section)
    assert len(failing) >= 3, failing           # grad/output, lod, fuzz, explore, ...
    head = blocks[0].split()[1:]
    under = section.split("also failed these checks, one line each:", 1)[1]
    assert label in section.split("also failed these checks", 1)[0].splitlines()[-1]
    for check in failing:
        assert check in " ".join(head) or f"\n      {check} " in under, (check, section)


def test_the_correct_twin_passes(softsign_run):
    assert "good_softsign: PASS" in softsign_run["good_softsign"]


def test_a_cell_passes_only_what_it_judged(softsign_run):
    section = softsign_run["wrong_grad_softsign"]
    # float32: lod and fuzz judge no gradient values there (the gradient is wrong everywhere)
    for check in ("lod", "fuzz"):
        row = _row(section, check)
        assert row[1] == "pass*" and row[2] == "fail", row
        assert re.search(rf"pass\* {check} \[CPU float32\]: passed without judging "
                         rf"[a-z, ]*gradient values", section), section
    assert _row(section, "output")[1:3] == ["pass", "pass"]


def test_grid_pass_star_only_where_no_pass_judged_it():
    from harness.reporting.report import CheckResult
    from opkit.cli.table import PARTIAL, grid

    class Rep:
        op = "no_such_op_for_the_grid"
        results = [CheckResult("lod", "pass", "CPU", "float32", "A/given",
                               not_judged="output values, gradient values"),
                   CheckResult("lod", "pass", "CPU", "float32", "A/edge",
                               not_judged="gradient values"),
                   CheckResult("lod", "pass", "CPU", "float64", "A/given",
                               not_judged="output values, gradient values"),
                   CheckResult("lod", "pass", "CPU", "float64", "A/edge")]
    _, g = grid(Rep)
    assert g["cells"][("lod", "CPU", "float32")] == PARTIAL
    assert g["partial"][("lod", "CPU", "float32")] == "gradient values"
    assert g["cells"][("lod", "CPU", "float64")] == "pass"
    # JSON: the status stays "pass"; the key only where something was left out
    assert Rep.results[1].to_json()["status"] == "pass"
    assert Rep.results[1].to_json()["not_judged"] == "gradient values"
    assert "not_judged" not in Rep.results[3].to_json()


def test_a_failure_names_its_kernel_function_and_line(softsign_run):
    sys.path.insert(0, str(HERE))
    try:
        import softsign_ops
    finally:
        sys.path.remove(str(HERE))
    for op, fn, label in (("wrong_grad_softsign", softsign_ops.wrong_grad_kernel,
                           "grad kernel"),
                          ("wrong_fwd_softsign", softsign_ops.wrong_fwd_kernel, "kernel")):
        line = inspect.getsourcelines(fn)[1]
        assert f"{label}: {fn.__name__} (" in softsign_run[op], softsign_run[op]
        assert f"softsign_ops.py:{line})" in softsign_run[op]


def test_fuzz_shrinks_past_its_draws_and_prints_a_large_case_short(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sys.path.insert(0, str(HERE))
    try:
        import softsign_ops  # noqa: F401 - registers the ops
        import softsign_optests
    finally:
        sys.path[:] = [p for p in sys.path if p != str(HERE)]
    from harness.executing.fuzz import fuzz_test

    bad = [r for r in fuzz_test(softsign_optests.TestWrongGradSoftsign, 1, 2024)
           if r.status == "fail"]
    assert bad, "the wrong gradient was not found"
    # the strategy draws each size within 2 of the test's (8, 16); the cut goes below
    shapes = re.findall(r"'X': np\.array\((\[.*?\]), dtype", bad[0].message, re.S)
    assert shapes and np.array(eval(shapes[0])).size <= 4, bad[0].message


def test_a_large_reproducer_is_a_summary_and_a_file(tmp_path, monkeypatch):
    from harness.backend.case import Case
    from harness.optest.reproduce import SMALL_ARRAY, format_optest, shown_optest

    monkeypatch.setenv("OPKIT_CASES_DIR", str(tmp_path))
    big = np.arange(6 * 14, dtype=np.float64).reshape(6, 14) / 7
    case = Case(name="T", op_type="relu", inputs={"X": big}, attrs={},
                outputs={"Out": big})
    text = format_optest(case, "TestBig")
    shown = shown_optest(case, "TestBig", text)
    assert len(shown.splitlines()) < 25 < len(text.splitlines())
    assert "shape (6, 14) float64, min 0, max 11.86" in shown
    saved = re.search(r"saved in (\S+\.py)", shown).group(1)
    assert open(saved, encoding="utf-8").read() == text
    compile(shown, "<shown>", "exec")                   # still Python (`...` for the array)
    small = Case(name="T", op_type="relu", inputs={"X": big[:1, :SMALL_ARRAY // 2]},
                 attrs={}, outputs={"Out": big[:1, :SMALL_ARRAY // 2]})
    assert shown_optest(small, "TestSmall", format_optest(small, "TestSmall")) == \
        format_optest(small, "TestSmall")


def test_skipped_checks_are_grouped_by_why():
    from harness.reporting.report import CheckResult
    from harness.executing.pool import OpReport
    from opkit.cli.table import one_line

    rep = OpReport("x", [CheckResult("output", "pass", "CPU", "float32", "T"),
                         CheckResult("lod", "skip", "", "", "T", "no LoD input"),
                         CheckResult("inplace", "skip", "", "", "T",
                                     "op 'x' declares no inplace pairs"),
                         CheckResult("places", "skip", "", "", "T",
                                     "GPU not usable: cupy is not installed")], ["T"])
    line = one_line(rep)
    assert "skipped 3: 2 nothing of its kind in this op (inplace, lod); 1 needs a GPU " \
           "(places); -v: each reason" in line, line


def test_pytest_traceback_ends_in_the_users_test(tmp_path):
    shutil.copy(OPS, tmp_path / "softsign_ops.py")
    shutil.copy(TESTS, tmp_path / "test_softsign.py")
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nimport softsign_ops  # noqa\n",
        encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", "-p",
                        "no:cacheprovider", "--opkit-no-check-items",
                        "test_softsign.py::TestWrongGradSoftsign::test_check_grad"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, NO_COLOR="1"))
    assert p.returncode == 1, p.stdout[-3000:]
    failure = p.stdout.split("= FAILURES =", 1)[1].split("short test summary", 1)[0]
    assert re.search(r"\ntest_softsign\.py:\d+: AssertionError", failure), failure
    assert "harness/" not in failure and "harness\\" not in failure, failure
    assert "grad kernel: wrong_grad_kernel (softsign_ops.py:" in failure


# -- the CLI's small items ------------------------------------------------------------------
def test_a_missing_durations_file_is_a_usage_error(tmp_path):
    p = opkit("test", "relu", "--durations", tmp_path / "nosuch.json", "--checks", "output")
    assert p.returncode == 2 and "nosuch.json: no such file" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_no_optest_for_a_named_op_says_tests(tmp_path):
    p = opkit("test", "relu", "--tests", tmp_path)
    assert p.returncode == 2 and "no OpTest found for op 'relu'" in p.stderr
    assert "--tests PATH" in p.stderr, p.stderr


def test_lint_help_names_cpp():
    for args in (("--help",), ("lint", "--help")):
        p = opkit(*args)
        assert p.returncode == 0 and "C++" in p.stdout and "Python files" not in p.stdout


CLIP = '''
from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator


class ClipMaker(OpMaker):
    def make(self):
        self.add_input("X", "the input")
        self.add_output("Out", "X clipped to [0, 1]")
        self.add_comment("clip to [0, 1]")


class ClipOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("cpu_only_clip", ClipOp, ClipMaker)


@register_kernel("cpu_only_clip", place="CPU", dtypes=("float32", "float64"))
def clip_kernel(ctx):
    ctx.set_output("Out", ctx.input("X").clip(0, 1))
'''


def test_no_op_names_and_all_agree_on_an_op_without_optest(tmp_path):
    (tmp_path / "my_ops").mkdir()
    (tmp_path / "tests").mkdir()
    shutil.copy(OPS, tmp_path / "my_ops" / "softsign_op.py")
    (tmp_path / "my_ops" / "cpu_only_clip_op.py").write_text(CLIP, encoding="utf-8")
    text = TESTS.read_text(encoding="utf-8")
    (tmp_path / "tests" / "test_good.py").write_text(
        text[:text.index("class TestWrongGrad")], encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.opkit]\nops = ["my_ops"]\n'
                                             'tests = ["tests"]\n', encoding="utf-8")
    verdicts = {}
    for args in ((), ("--all",)):
        p = opkit("test", *args, "--checks", "output", "--format", "json", cwd=tmp_path)
        assert p.returncode == 1, p.stderr
        verdicts[args] = {op["op"]: op["status"] for op in json.loads(p.stdout)["ops"]}
    assert verdicts[()]["cpu_only_clip"] == "fail" and verdicts[()]["good_softsign"] == "pass"
    assert verdicts[()] == verdicts[("--all",)]
    p = opkit("test", "--checks", "output", "-v", cwd=tmp_path)
    section = p.stdout.split("cpu_only_clip: FAIL", 1)[1].split("\n\n", 1)[0]
    row = _row(section, "output")
    assert row[1:5] == ["fail", "fail", "-", "-"], section      # no GPU kernel: no verdict
    assert "n/a [GPU float32, GPU float64]: the op has no kernel there" in section
