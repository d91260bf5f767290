"""`--tests`: a path that does not exist is a usage error (with an op named and with --all);
an OpTest file that cannot be imported shows its error also when an op is named."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from harness_test_helpers import ROOT


def run(args, cwd=ROOT):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "opkit", "test", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=1800, env=env)


def test_missing_tests_path_with_an_op(tmp_path):
    p = run(["relu", "--tests", tmp_path / "nosuchdir", "--checks", "output"])
    assert p.returncode == 2, p.stderr
    line, = p.stderr.strip().splitlines()
    assert "nosuchdir" in line and "no such file or folder" in line, line


def test_missing_tests_path_with_all(tmp_path):
    p = run(["--all", "--tests", tmp_path / "nosuchdir", "--checks", "output",
             "--format", "json"])
    assert p.returncode == 2, p.stderr
    assert "no such file or folder" in json.loads(p.stdout)["error"]


SYNTAX_ERROR = '''
from harness import OpTest


class TestMine(OpTest):
    def setUp(self):
        self.op_type = "relu"
        self.inputs = {"X": [[1.0, -1.0]]
'''


def test_syntax_error_in_the_ops_optest_is_its_failure(tmp_path):
    (tmp_path / "test_mine.py").write_text(SYNTAX_ERROR, encoding="utf-8")
    p = run(["relu", "--tests", tmp_path, "--checks", "output", "--format", "json"])
    assert p.returncode == 1, p.stderr
    op, = json.loads(p.stdout)["ops"]
    assert op["op"] == "relu" and op["status"] == "fail"
    assert "SyntaxError" in json.dumps(op)


def test_syntax_error_in_another_file_is_named_in_the_usage_error(tmp_path):
    (tmp_path / "test_mine.py").write_text(SYNTAX_ERROR.replace('"relu"', "OP"),
                                           encoding="utf-8")
    p = run(["relu", "--tests", tmp_path, "--checks", "output"])
    assert p.returncode == 2, p.stderr
    assert "no OpTest found" in p.stderr and "SyntaxError" in p.stderr
    assert "test_mine.py" in p.stderr
