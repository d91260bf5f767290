"""Every reproducer under examples/paddle_bugs/ runs standalone against the installed Paddle
and says whether the behaviour its row records still shows (exit 1, "STILL SHOWS: ...") or
has changed (exit 0, "FIXED: ..."). The test fails when a reproducer crashes, prints
something else, or imports anything of opkit (read from its AST: `import paddle, opkit`,
`from opkit_paddle import ...`, an import inside a function, `__import__("harness")` and
`importlib.import_module("checkers")` all count), or when its first line does not state
the row and grade docs/paddle.md's table gives it; it passes either way otherwise, and
reports which rows still show (`pytest -rA tests/paddle_backend/test_paddle_bugs.py`)."""
from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paddle_backend_helpers import ROOT

BUGS = sorted((ROOT / "examples" / "paddle_bugs").glob("*.py"))
# the packages this repository installs (pyproject.toml: "opkit*", checkers, harness,
# reference_ops); opkit* takes opkit_paddle, opkit_torch and any later plugin
OURS = re.compile(r"^(opkit\w*|harness|checkers|reference_ops)$")


def opkit_imports(path: Path) -> list[str]:
    """Each import of one of this repository's packages in the file, as `LINE: MODULE`."""
    found = []

    def note(node, module):
        if module and OURS.match(module.split(".")[0]):
            found.append(f"{node.lineno}: {module}")

    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:                  # `import paddle, opkit` names both
                note(node, alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                note(node, node.module)
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(
                f, ast.Attribute) else None
            if (name in ("__import__", "import_module") and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                note(node, node.args[0].value)
    return found


def test_there_are_reproducers_and_the_docs_table_names_each():
    assert len(BUGS) >= 10
    doc = (ROOT / "docs" / "paddle.md").read_text()
    for path in BUGS:
        assert f"examples/paddle_bugs/{path.name}" in doc, path.name


GRADES = ("bug, public API", "crash on invalid input", "contract difference", "not a bug")


def table_rows() -> dict[str, tuple[str, str]]:
    """docs/paddle.md's bug table: reproducer file name -> (row id, grade)."""
    rows = {}
    for line in (ROOT / "docs" / "paddle.md").read_text().splitlines():
        m = re.match(r"^\| (\d+b?) \| ([^|]+?) \|.*examples/paddle_bugs/(\S+\.py) \|$", line)
        if m:
            rows[m.group(3)] = (m.group(1), m.group(2))
    return rows


@pytest.mark.parametrize("path", BUGS, ids=[p.stem for p in BUGS])
def test_each_row_has_a_grade_and_its_reproducer_states_it(path):
    row, grade = table_rows()[path.name]
    assert grade in GRADES, (path.name, grade)
    first = path.read_text().split("\n", 1)[0]
    assert first.startswith(f'"""Row {row}, graded {grade.upper()}'), (path.name, first)


@pytest.mark.parametrize("path", BUGS, ids=[p.stem for p in BUGS])
def test_reproducer_imports_nothing_of_opkit(path):
    assert opkit_imports(path) == [], "a reproducer is plain Paddle: no opkit import"


@pytest.mark.parametrize("line", [
    "import paddle, opkit",
    "import numpy as np, opkit_paddle.backend as b",
    "from opkit_paddle import backend",
    "from opkit_torch.backend import op",
    "import harness.checks",
    "from reference_ops import relu",
    "def f():\n    import checkers\n",
    "m = __import__('opkit')",
    "import importlib\nm = importlib.import_module('opkit_paddle.compat')",
])
def test_the_import_check_catches_a_planted_offender(tmp_path, line):
    path = tmp_path / "planted.py"
    path.write_text(f'"""a reproducer"""\nimport sys\n\nimport paddle\n{line}\n')
    assert opkit_imports(path), line
    with pytest.raises(AssertionError, match="no opkit import"):
        test_reproducer_imports_nothing_of_opkit(path)


def test_the_import_check_passes_plain_paddle(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text("import os, sys\nimport numpy as np\nimport paddle\n"
                    "from paddle.base import core\nimport torch\nfrom . import sibling\n"
                    "m = __import__('paddle.nn')\n")
    assert opkit_imports(path) == []


@pytest.mark.skipif(importlib.util.find_spec("paddle") is None,
                    reason="paddlepaddle is not installed: pip install 'opkit-dl[paddle]'")
@pytest.mark.parametrize("path", BUGS, ids=[p.stem for p in BUGS])
def test_reproducer_runs_standalone_and_reports(path):
    assert opkit_imports(path) == [], "a reproducer is plain Paddle: no opkit import"
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                       timeout=1800, cwd=ROOT)
    last = (p.stdout.strip().splitlines() or [""])[-1]
    assert p.returncode in (0, 1), (p.returncode, p.stdout[-500:], p.stderr[-2000:])
    want = "STILL SHOWS: " if p.returncode == 1 else "FIXED: "
    assert last.startswith(want), (p.returncode, last)
    print(f"{path.name}: {last}")
