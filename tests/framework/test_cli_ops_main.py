"""The `opkit` dispatcher and `opkit ops`: usage errors exit 2 with one line, never a traceback."""
import json
import subprocess
import sys

import pytest


def opkit(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "opkit", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=1800)


def test_unknown_command_is_a_usage_error():
    p = opkit("frobnicate")
    assert p.returncode == 2
    assert "unknown command 'frobnicate'" in p.stderr and "Traceback" not in p.stderr


def test_bad_flag_is_a_usage_error():
    p = opkit("ops", "--no-such-flag")
    assert p.returncode == 2 and "unrecognized arguments" in p.stderr


def test_no_command_prints_help_and_exits_2():
    p = opkit()
    assert p.returncode == 2 and "commands:" in p.stderr and p.stdout == ""  # usage error: help on stderr


@pytest.mark.parametrize("cmd", ["lint", "test", "dump", "compat", "ops"])
def test_every_command_has_help(cmd):
    p = opkit(cmd, "--help")
    assert p.returncode == 0 and f"opkit {cmd}" in p.stdout


def test_ops_lists_kernels_as_json():
    p = opkit("ops", "--format", "json")
    assert p.returncode == 0
    rows = {r["op"]: r for r in json.loads(p.stdout)}
    assert rows["clip"]["kernels"]["CPU"] == ["bfloat16", "float16", "float32", "float64"]
    assert rows["reshape"]["inplace"] == {"X": "Out"}
    assert "clip_grad" not in rows
    assert "clip_grad" in {r["op"] for r in json.loads(opkit("ops", "--grad", "--format",
                                                               "json").stdout)}


def test_ops_plain_text_when_not_a_tty():
    p = opkit("ops")
    assert p.returncode == 0 and "clip" in p.stdout and "ops" in p.stdout.splitlines()[-1]


def test_ops_module_errors_name_the_file_and_line(tmp_path):
    bad = tmp_path / "dup_op.py"
    bad.write_text("from opkit import register_operator, OperatorWithKernel\n"
                   "class Op(OperatorWithKernel):\n    pass\n"
                   "register_operator('clip', Op)\n")
    p = opkit("ops", "--ops", str(bad))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"{bad}:4" in p.stderr and "registered twice" in p.stderr
    p = opkit("ops", "--ops", str(tmp_path / "missing_op.py"))
    assert p.returncode == 2 and "no such file" in p.stderr


def test_extra_ops_module_is_registered(tmp_path):
    mod = tmp_path / "twice_op.py"
    mod.write_text(
        "from opkit import OpMaker, OperatorWithKernel, register_operator, register_kernel\n"
        "class M(OpMaker):\n"
        "    def make(self):\n"
        "        self.add_input('X', 'x')\n"
        "        self.add_output('Out', 'o')\n"
        "        self.add_comment('Twice. $$Out = 2X$$')\n"
        "class Op(OperatorWithKernel):\n"
        "    def infer_shape(self, ctx):\n"
        "        ctx.set_output_dim('Out', ctx.get_input_dim('X'))\n"
        "register_operator('twice', Op, M)\n"
        "@register_kernel('twice')\n"
        "def k(ctx):\n"
        "    ctx.set_output('Out', ctx.input('X') * 2)\n")
    rows = {r["op"]: r for r in json.loads(opkit("ops", "--ops", str(mod), "--format",
                                                 "json").stdout)}
    assert rows["twice"]["kernels"] == {"CPU": ["float32", "float64"]}
