"""The defects found when opkit was tried as a new user would (issue 22, item 6): each test
reproduces one and fails without its fix."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness_test_helpers import ROOT

MAIN = "import sys; from opkit.cli.main import main; sys.exit(main())"


def opkit(*args, cwd=ROOT, timeout=1800):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-c", MAIN, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)


SCALE_TEST = '''
import numpy as np
from harness import OpTest


class TestScaleNoAttrs(OpTest):
    def setUp(self):
        self.op_type = "scale"
        x = np.random.uniform(-1, 1, (3, 4))
        self.inputs = {"X": x}
        self.outputs = {"Out": x}

    def reference(self, inputs, attrs):
        scale, bias = attrs.get("scale", 1.0), attrs.get("bias", 0.0)
        x = inputs["X"]
        if attrs.get("bias_after_scale", True):
            return {"Out": x * scale + bias}
        return {"Out": (x + bias) * scale}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        GRAD_BODY
'''


def _scale_test(tmp_path, grad_body="self.check_grad(['X'], 'Out')"):
    path = tmp_path / "test_scale_op.py"
    path.write_text(SCALE_TEST.replace("GRAD_BODY", grad_body))
    return path


# -- 1. a test_check_grad that checks nothing is no gradient test --------------------------
def test_a_grad_test_whose_body_is_pass_is_no_gradient_test(tmp_path):
    path = _scale_test(tmp_path, "pass  # self.check_grad(['X'], 'Out')")
    got = opkit("test", "scale", "--tests", str(path), "--checks", "output,grad",
                "--format", "json", cwd=tmp_path)
    assert got.returncode == 1, got.stdout + got.stderr
    (op,) = json.loads(got.stdout)["ops"]
    grad = [c for c in op["checks"] if c["check"] == "grad" and c["status"] == "fail"]
    assert grad and "no gradient test" in grad[0]["message"], op


def test_a_grad_test_that_runs_check_grad_passes(tmp_path):
    path = _scale_test(tmp_path)
    got = opkit("test", "scale", "--tests", str(path), "--checks", "output,grad",
                "--format", "json", cwd=tmp_path)
    assert got.returncode == 0, got.stdout + got.stderr


# -- 2. an OpTest without self.attrs can be fuzzed -----------------------------------------
def test_fuzz_on_an_optest_without_attrs(tmp_path):
    path = _scale_test(tmp_path)
    got = opkit("test", "scale", "--tests", str(path), "--checks", "fuzz", "--fuzz", "5",
                "--format", "json", cwd=tmp_path)
    assert "AttributeError" not in got.stdout + got.stderr
    assert got.returncode == 0, got.stdout + got.stderr


def pytest_run(*args, cwd, timeout=1800, cache=False):
    env = dict(os.environ, NO_COLOR="1")
    no_cache = [] if cache else ["-p", "no:cacheprovider"]
    return subprocess.run([sys.executable, "-m", "pytest", *no_cache, *args],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def test_the_pytest_plugin_gives_the_same_no_gradient_test_verdict(tmp_path):
    _scale_test(tmp_path, "pass  # self.check_grad(['X'], 'Out')")
    got = pytest_run("test_scale_op.py", "-rA", "-q", "-k", "grad", cwd=tmp_path)
    assert "no gradient test" in got.stdout, got.stdout[-3000:]
    assert got.returncode == 1


# -- 7. a misspelt op_type gets the did-you-mean hint for a named op too --------------------
def test_named_op_whose_optest_misspells_op_type_gets_the_hint(tmp_path):
    path = _scale_test(tmp_path)
    path.write_text(path.read_text().replace('"scale"', '"scalee"'))
    got = opkit("test", "scale", "--tests", str(path), cwd=tmp_path)
    assert got.returncode == 2, got.stdout + got.stderr
    assert "no OpTest found for op 'scale'" in got.stderr
    assert "test_scale_op.py:6: OpTest TestScaleNoAttrs tests op 'scalee'" in got.stderr
    assert "did you mean op_type = 'scale'?" in got.stderr, got.stderr


# -- 4. an installed copy and a checkout of the same OpTests: collected once -----------------
def test_the_builtin_optests_in_the_project_and_installed_run_once(tmp_path):
    from harness.selecting.discovery import builtin_test_paths

    (installed,) = [p for p in builtin_test_paths() if p.parent.name == "reference_ops"]
    checkout = tmp_path / "reference_ops" / "tests"
    checkout.mkdir(parents=True)
    (checkout / "test_relu_op.py").write_text((installed / "test_relu_op.py").read_text())
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.opkit]\ntests = ["reference_ops/tests"]\n')
    # the console script (`python -c` would import the copy's folder as reference_ops)
    script = os.path.join(os.path.dirname(sys.executable), "opkit")
    got = subprocess.run([script, "test", "relu", "--checks", "output", "--format", "json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert got.returncode == 0, got.stdout + got.stderr
    (op,) = json.loads(got.stdout)["ops"]
    cases = [c["case"] for c in op["checks"] if c["check"] == "output"]
    # one result per place x dtype of the one class, not two copies of each
    assert len(cases) == len(set((c["case"], c["place"], c["dtype"]) for c in op["checks"]
                                 if c["check"] == "output")), op["checks"]
    assert set(cases) == {"TestReluOp"}


# -- 3. --ops with an orphan kernel or a file that is no Python: a clear error, exit 2 --------
ORPHAN = '''from opkit.registry import register_kernel


@register_kernel("nobody_registers_this")
def kernel(ctx):
    pass
'''


@pytest.mark.parametrize("command", [["ops"], ["test", "--all", "--checks", "output"]])
def test_ops_file_with_a_kernel_for_an_unregistered_op(tmp_path, command):
    (tmp_path / "orphan_kernel.py").write_text(ORPHAN)
    got = opkit(*command, "--ops", "orphan_kernel.py", cwd=tmp_path)
    assert got.returncode == 2, got.stdout + got.stderr
    assert "Traceback" not in got.stderr
    assert "orphan_kernel.py:4: a kernel is registered for op 'nobody_registers_this'" \
        in got.stderr, got.stderr


def test_ops_file_that_is_not_python(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("some notes\n")
    got = opkit("ops", "--ops", str(notes), cwd=tmp_path)
    assert got.returncode == 2, got.stdout + got.stderr
    assert "AttributeError" not in got.stderr and "Traceback" not in got.stderr
    assert f"--ops {notes}: {notes} is not a Python file" in got.stderr, got.stderr


# -- 5. the table: GPU columns without a GPU, a failing row's worst error, block order -------
def _report(results):
    from harness.executing.pool import OpReport

    return OpReport("boom", results, cases=["TestBoom"])


def test_table_a_check_that_names_no_place_fills_only_the_places_that_ran():
    from harness.reporting.report import FAIL, PASS, SKIP, CheckResult
    from opkit.cli.table import grid

    rep = _report([CheckResult("output", PASS, "CPU", "float32", "TestBoom"),
                   CheckResult("output", PASS, "CPU", "float64", "TestBoom"),
                   CheckResult("output", SKIP, "GPU", "", "TestBoom", "no GPU"),
                   CheckResult("dtypes", PASS, "", "", "TestBoom"),
                   CheckResult("precision", FAIL, "", "", "TestBoom", "raised X: y")])
    _, g = grid(rep)
    assert g["cells"][("dtypes", "CPU", "float32")] == PASS
    assert g["cells"][("precision", "CPU", "float64")] == FAIL
    for check in ("dtypes", "precision"):
        assert ("GPU" not in {p for (c, p, _) in g["cells"] if c == check}), g["cells"]


def test_table_a_failing_row_shows_no_worst_error_of_zero(capsys):
    from harness.reporting.report import FAIL, PASS, CheckResult
    from opkit.cli.table import render_plain

    rep = _report([CheckResult("output", PASS, "CPU", "float32", "TestBoom", "", 0.0),
                   CheckResult("output", FAIL, "CPU", "float64", "TestBoom",
                               "output 'Out' has shape (2, 3), expected (3, 2)")])
    render_plain([rep])
    (row,) = [line for line in capsys.readouterr().out.splitlines()
              if line.strip().startswith("output")]
    assert row.split()[-1] != "0", row
    assert row.split()[1:3] == ["pass", "fail"], row


def test_failure_blocks_follow_the_table_order():
    from harness.reporting.report import FAIL, CheckResult
    from opkit.cli.table import _details

    from harness.reporting.messages import UNCAUGHT

    # two causes (two errors): two blocks, the table's order (one cause: one block,
    # tests/harness/test_one_cause.py)
    rep = _report([CheckResult("precision", FAIL, "", "", "TestBoom",
                               "raised TypeError: float16 is not supported", kind=UNCAUGHT),
                   CheckResult("output", FAIL, "CPU", "float32", "TestBoom",
                               "op 'boom': the op raised ValueError: kernel exploded")])
    lines = [text for _, text in _details(rep)]
    assert lines[0].startswith("FAIL output"), lines
    assert "(check precision)" in lines[1], lines


# -- 6. pytest: the check items are collected, selectable and rerunnable ---------------------
def _relu_file(tmp_path, wrong=False):
    text = (ROOT / "reference_ops" / "tests" / "test_relu_op.py").read_text()
    if wrong:
        text = text.replace('{"Out": np.maximum(inputs["X"], 0)}',
                            '{"Out": np.maximum(inputs["X"], 0) + 1.0}')
        assert "+ 1.0" in text
    (tmp_path / "test_relu_op.py").write_text(text)


def test_pytest_collects_the_check_items_with_their_class(tmp_path):
    _relu_file(tmp_path)
    got = pytest_run("--co", "-q", cwd=tmp_path)
    ids = [line for line in got.stdout.splitlines() if "::" in line]
    assert "test_relu_op.py::TestReluOp::opkit[grad]" in ids, got.stdout
    assert f"{len(ids)} tests collected" in got.stdout, got.stdout   # counted when collected


def test_pytest_selects_a_check_item_by_its_id_and_by_k(tmp_path):
    _relu_file(tmp_path)
    got = pytest_run("test_relu_op.py::TestReluOp::opkit[dtypes]", "-q", "-rA", cwd=tmp_path)
    assert got.returncode == 0 and "1 passed" in got.stdout, got.stdout[-2000:]
    got = pytest_run("-q", "-rA", "-k", "mutation", cwd=tmp_path)
    assert got.returncode == 0, got.stdout[-2000:]
    assert "PASSED test_relu_op.py::TestReluOp::opkit[mutation]" in got.stdout
    assert "1 passed" in got.stdout, got.stdout[-2000:]


def test_pytest_last_failed_reruns_only_the_failed_items(tmp_path):
    _relu_file(tmp_path, wrong=True)
    first = pytest_run("-q", "-k", "output", cwd=tmp_path, cache=True)
    assert "2 failed" in first.stdout, first.stdout[-2000:]
    again = pytest_run("-q", "-rA", "--lf", cwd=tmp_path, cache=True)
    ran = sorted(line.split(" - ")[0] for line in again.stdout.splitlines()
                 if line.startswith(("PASSED", "FAILED")))
    assert ran == ["FAILED test_relu_op.py::TestReluOp::opkit[output]",
                   "FAILED test_relu_op.py::TestReluOp::test_check_output"], again.stdout[-3000:]


# -- 9. the docs and messages say what is true -------------------------------------------------
def _doc(name):
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def test_opmaker_add_attr_signature_is_documented():
    import inspect

    from opkit import OpMaker

    params = inspect.signature(OpMaker.add_attr).parameters
    parts = []
    for name, p in params.items():
        if name == "self":
            continue
        if p.default is inspect.Parameter.empty:
            parts.append(name)
        elif name == "default":
            parts.append("default=NO_DEFAULT")
        else:
            parts.append(f"{name}={p.default!r}".replace("''", '""'))
    shown = ", ".join(parts)
    assert f"add_attr({shown})" in _doc("tutorial.md"), shown


def test_timeout_help_and_docs_agree():
    got = opkit("test", "--help")
    help_text = " ".join(got.stdout.split())
    assert "--timeout SECONDS time limit per check, a finite number of seconds >= 0" in help_text
    assert "a finite number >= 0 (default 120 s; 0 = none)" in _doc("harness.md")


def test_harness_md_says_while_is_exempt():
    line = next(ln for ln in _doc("harness.md").splitlines() if ln.startswith("| `while`"))
    assert "`EXEMPT`" in line and "as `skip`" not in line, line
    from harness.executing.pool import OpReport
    from harness.api import no_optest_result
    from opkit.cli.table import one_line

    result, reason = no_optest_result("while", {"while": "control flow"})
    assert one_line(OpReport("while", [result], exempt=reason)).startswith("while: EXEMPT")


def test_the_progress_line_says_what_it_counts():
    from opkit.cli.test import TASKS

    assert "tasks" in TASKS and "OpTest classes" in TASKS
    r, w = os.pipe()
    saved = os.dup(2)
    os.dup2(w, 2)
    try:
        from opkit.cli import table

        with table.heartbeat(443, "opkit test", every=0.05, unit=TASKS) as advance:
            advance()
            import time

            time.sleep(0.3)
    finally:
        os.dup2(saved, 2)
        os.close(w)
    text = os.read(r, 10000).decode()
    os.close(r)
    assert f"opkit test: 1/443 {TASKS} done" in text, text


def test_one_note_is_one_note():
    from checkers.compat.compare import CompatReport
    from checkers.compat.report import text_report

    note = {"op": "clip", "kind": "input-flag-changed", "message": "m"}
    text = text_report(CompatReport(notes=[note], old_ops=1, new_ops=1))
    assert "(1 note)" in text and "1 notes" not in text, text
