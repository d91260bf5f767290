"""opkit's Paddle-compatibility mode on the spelling of Paddle 2.x / 3.x test files
(paddle.base, op.Operator, gradient_checker, decorator_helper, utils, pir_utils), and a test
file the mode cannot import."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURE = HERE / "fixtures" / "paddle2_style_cases.py"


def _env():
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("OPKIT_PADDLE", None)
    return env


def _pytest(*args):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p",
                           "no:cacheprovider", "-q", "-rsf", "--opkit-no-check-items",
                           *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=1800)


def test_paddle2_spelling_in_the_mode():
    proc = _pytest("--opkit-paddle", FIXTURE)
    out = proc.stdout
    tail = out.strip().splitlines()[-1]
    # passed: scale output/grad, 0-D sigmoid, fill_constant, Operator x3, mode probes
    assert "1 failed, 8 passed" in tail, out[-4000:]
    assert "TestScale2xWrong::test_check_output" in out          # a wrong value still fails
    assert "TestScaleMixin" not in out                            # a mixin is not collected
    assert "out of scope: opkit has no op 'cosh'" in out
    assert "op.Operator('cosh'): opkit has no op 'cosh'" in out
    assert "complex64: op 'sigmoid' has no complex64 kernel in opkit" in out
    assert "paddle.static.data is Paddle's own Python API" in out     # prog_scope body
    assert "gradient_checker triple-grad check: y was not made by an opkit op" in out
    assert "6 skipped" in tail        # + TestScale2xWrong.test_check_grad: ran no check


def test_a_file_that_cannot_be_imported_is_one_error_and_the_others_run(tmp_path):
    bad = tmp_path / "test_needs_a_helper.py"
    bad.write_text("import paddle\nfrom op_test import OpTest\n"
                   "from some_paddle_helper_nobody_has import thing\n")
    good = tmp_path / "test_good.py"
    good.write_text(FIXTURE.read_text())
    proc = _pytest("--opkit-paddle", bad, good)
    out = proc.stdout
    assert f"{bad} cannot be imported in opkit's Paddle mode: ModuleNotFoundError: No " \
           "module named 'some_paddle_helper_nobody_has'" in out + proc.stderr, out[-3000:]
    tail = out.strip().splitlines()[-1]
    assert "8 passed" in tail and "1 error" in tail, tail


def test_opkit_test_paddle_counts_files_it_cannot_import(tmp_path):
    (tmp_path / "test_needs_a_helper.py").write_text(
        "from op_test import OpTest\nfrom some_paddle_helper_nobody_has import thing\n")
    (tmp_path / "test_good.py").write_text(FIXTURE.read_text())
    proc = subprocess.run([sys.executable, "-m", "opkit.cli.main", "test", "--paddle",
                           "--tests", str(tmp_path), "--format", "json", "--checks",
                           "output,grad"],
                          capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=1800)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1
    note = " ".join(doc.get("notes", []))
    assert "1 test file could not be imported" in note and "test_needs_a_helper.py" in note
    assert "some_paddle_helper_nobody_has" in note
    by_op = {op["op"]: op for op in doc["ops"]}
    assert by_op["cosh"]["status"] == "skip"          # out of scope, not a failure
    assert "out of scope" in json.dumps(by_op["cosh"])
    checks = by_op["scale"]["checks"]
    assert any(c["status"] == "pass" and c["case"] == "TestScale2x" for c in checks)
    assert any(c["status"] == "fail" and c["case"] == "TestScale2xWrong" for c in checks)


def test_facade_modules_leave_with_the_mode():
    code = ("from opkit_paddle import compat as paddle_compat\nimport sys\n"
            "paddle_compat.activate()\n"
            "import paddle.base.core, op, gradient_checker, utils, decorator_helper\n"
            "import paddle.incubate.autograd\n"
            "print(paddle.base is paddle.fluid)\npaddle_compat.deactivate()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('paddle', 'op', "
            "'gradient_checker', 'utils', 'decorator_helper')))\n"
            "print(any(type(f).__module__ == 'paddle._facade' for f in sys.meta_path))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(), cwd="/")
    assert out.stdout.split("\n")[:3] == ["True", "[]", "False"], out.stderr
