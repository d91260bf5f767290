"""numpy's semantics in `opkit lint` come from a table generated from numpy
(checkers/lint/numpy_probe.py -> numpy_table.py). The committed table must be what the
installed numpy says, and the facts the rules rely on must be in it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checkers.lint import numpy_table as T

ROOT = Path(__file__).resolve().parents[2]


def test_committed_table_matches_the_installed_numpy():
    # in a child process: the probes call numpy with odd arguments; the linter itself never
    # imports numpy
    code = ("from checkers.lint import numpy_probe as p; import sys; "
            "sys.stdout.write(p.render(p.build()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=1800)
    assert out.returncode == 0, out.stderr[-2000:]
    committed = (ROOT / "checkers" / "lint" / "numpy_table.py").read_text()
    assert out.stdout == committed, ("checkers/lint/numpy_table.py is stale for this numpy: "
                                     "run `python -m checkers.lint.numpy_probe`")


@pytest.mark.parametrize("name,form,flag", [
    ("split", "2", "s"), ("array_split", "2", "s"), ("ravel", "1", "v"), ("diagonal", "1", "v"),
    ("asarray", "1", "v"), ("copyto", "2", "w"), ("fill_diagonal", "2", "w"),
    ("nan_to_num", "copy=False", "w"), ("array", "1", "n"), ("array", "copy=False", "v"),
])
def test_functions(name, form, flag):
    assert flag in T.FUNCS[name][form]


@pytest.mark.parametrize("name,form,flag", [
    ("sort", "0", "w"), ("fill", "1", "w"), ("partition", "1", "w"), ("resize", "1", "w"),
    ("byteswap", "inplace=True", "w"), ("byteswap", "0", "n"), ("ravel", "0", "v"),
    ("astype", "1", "n"), ("astype", "copy=False", "v"), ("copy", "0", "n"),
])
def test_methods(name, form, flag):
    assert flag in T.METHODS[name][form]


def test_ufuncs_and_out_positions():
    assert T.UFUNCS["add"] == (2, 1) and T.UFUNCS["negative"] == (1, 1)
    assert T.UFUNCS["modf"] == (1, 2) and T.UFUNCS["divmod"] == (2, 2)
    assert T.OUT_POSITION["clip"] == 3
    assert "w" in T.RANDOM["shuffle"]["1"] and "w" not in T.RANDOM["permutation"]["1"]
    assert T.WRITTEN_PARAM["copyto"] == "dst"
    assert "v" in T.ATTRS["T"]


def test_linter_does_not_import_numpy():
    code = ("import sys; from checkers.lint.config import build_config; "
            "from checkers.lint.engine import lint_source; "
            "lint_source('k.py', b'from opkit import register_kernel\\n@register_kernel(\"k\")\\n"
            "def k(ctx):\\n    x = ctx.input(\"X\")\\n    x.sort()\\n', build_config({}, None)); "
            "print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
