"""The docs against the code: every command-line flag the docs give exists, every
documented exit code is the real one, `[tool.opkit]` keys in the docs are known, and the
docs stand alone (no files outside the repository cited)."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
COMMANDS = ("test", "lint", "dump", "compat", "ops")


def parser_of(command: str) -> argparse.ArgumentParser:
    from opkit.cli.main import COMMANDS as table

    module = importlib.import_module(table[command][0])
    parser = argparse.ArgumentParser(prog=f"opkit {command}")
    module.add_arguments(parser)
    return parser


def flags_of(command: str) -> set[str]:
    return {s for a in parser_of(command)._actions for s in a.option_strings}


def pytest_flags() -> set[str]:
    from harness import pytest_plugin

    found = set()

    class Group:
        def addoption(self, *names, **kwargs):
            found.update(names)

    class Parser:
        def getgroup(self, *args, **kwargs):
            return Group()

    pytest_plugin.pytest_addoption(Parser())
    return found


def _spans(text: str):
    """Code spans and code-block lines: where commands are written out."""
    yield from re.findall(r"`([^`\n]+)`", text)
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        yield from block.splitlines()


def documented_flags():
    """(doc, command, flag) for every `opkit COMMAND ... --flag` in the docs."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for span in _spans(text):
            for m in re.finditer(r"\bopkit (test|lint|dump|compat|ops)\b([^|;&#]*)", span):
                for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b", m.group(2)):
                    out.append((doc.name, m.group(1), flag))
    return out


def test_docs_give_commands_with_flags():
    assert len(documented_flags()) > 20


@pytest.mark.parametrize("doc, command, flag", sorted(set(documented_flags())))
def test_every_documented_flag_exists(doc, command, flag):
    assert flag in flags_of(command), f"{doc}: `opkit {command} {flag}` is not an option"


def test_harness_option_table_matches_opkit_test():
    text = (ROOT / "docs" / "harness.md").read_text(encoding="utf-8")
    table = text[text.index("## Options"):text.index("\n## ", text.index("## Options") + 3)]
    rows = re.findall(r"^\| ([^|]*(?:\\\|[^|]*)*) \|", table, re.M)
    flags = {f for row in rows for f in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-z])\b", row)}
    real = flags_of("test") - {"-h", "--help"}
    assert flags and flags <= real, sorted(flags - real)
    assert real <= flags, f"undocumented in docs/harness.md: {sorted(real - flags)}"


def test_every_documented_pytest_option_exists():
    real = pytest_flags()
    for doc in DOCS:
        for flag in re.findall(r"(--opkit-[a-z-]+)", doc.read_text(encoding="utf-8")):
            assert flag in real, f"{doc.name}: pytest option {flag} does not exist"


def test_documented_tool_opkit_keys_are_known():
    from opkit.project import KEYS, SECTIONS

    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for key in re.findall(r"\[tool\.opkit\] ([a-z][a-z-]*)", text):
            assert key in KEYS, f"{doc.name}: [tool.opkit] {key} is not a known key"
        for section in re.findall(r"\[tool\.opkit\.([a-z]+)\]", text):
            assert section in SECTIONS or section in KEYS, f"{doc.name}: {section}"


def test_docs_stand_alone():
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for name in ("API.md", "DESIGN.md"):
            assert name not in text, f"{doc.name} cites {name}, which is not in the repository"


# -- exit codes: the documented ones are the real ones ---------------------------------------
def opkit(*args, cwd=ROOT):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "opkit", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=1800, env=env).returncode


@pytest.fixture(scope="module")
def real_exit_codes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("codes")
    (tmp / "clean.py").write_text("x = 1\n")
    (tmp / "bad_op.py").write_text(
        "from opkit import register_kernel\n\n\n@register_kernel('bad')\n"
        "def k(ctx):\n    x = ctx.input('X')\n    x += 1\n    ctx.set_output('Out', x)\n")
    a = {"relu": {"Inputs": {}, "Outputs": {}, "Attrs": {}}}
    (tmp / "a.json").write_text(json.dumps(a))
    (tmp / "b.json").write_text("{}")
    (tmp / "bad.json").write_text("{nope")
    broken = ("--ops", "tests/broken_ops", "--tests", "tests/broken_ops")
    return {
        "lint": {opkit("lint", "--no-cache", "--isolated", tmp / "clean.py", cwd=tmp),
                 opkit("lint", "--no-cache", "--isolated", tmp / "bad_op.py", cwd=tmp),
                 opkit("lint", "--no-cache", tmp / "missing.py", cwd=tmp)},
        "compat": {opkit("compat", tmp / "a.json", tmp / "a.json"),
                   opkit("compat", tmp / "a.json", tmp / "b.json"),
                   opkit("compat", tmp / "a.json", tmp / "bad.json")},
        "test": {opkit("test", "relu", "--checks", "output"),
                 opkit("test", *broken, "broken_mutate_scale", "--checks", "mutation"),
                 opkit("test", "no_such_op_xyz")},
        "dump": {opkit("dump", "-o", tmp / "d.json"), opkit("dump", "-o", tmp / "no" / "x")},
        "ops": {opkit("ops"), opkit("ops", "--ops", tmp / "nope_op.py")},
    }


@pytest.mark.parametrize("command", COMMANDS)
def test_help_exit_codes_are_the_real_ones(command, real_exit_codes):
    module = importlib.import_module(f"opkit.cli.{command}")
    assert set(module.EXIT_CODES) == real_exit_codes[command], command


def test_readme_exit_codes_are_the_real_ones(real_exit_codes):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"Exit status:\s*0 success, 1 a check failed \(`test`, `lint`, `compat`\), "
                  r"2 usage error", " ".join(text.split()))
    assert m, "README: the exit status sentence changed; update this test with it"
    for command in ("test", "lint", "compat"):
        assert real_exit_codes[command] == {0, 1, 2}, command
    for command in ("dump", "ops"):
        assert real_exit_codes[command] == {0, 2}, command


def test_harness_doc_exit_codes(real_exit_codes):
    text = " ".join((ROOT / "docs" / "harness.md").read_text(encoding="utf-8").split())
    assert "Exit status: 0 every check passed or was skipped, 1 a check failed" in text
    assert real_exit_codes["test"] == {0, 1, 2}


def test_compat_doc_exit_codes(real_exit_codes):
    text = " ".join((ROOT / "docs" / "compat.md").read_text(encoding="utf-8").split())
    assert "Exit 1 fails the job on a break; exit 2" in text
    assert real_exit_codes["compat"] == {0, 1, 2}


def test_tutorial_runs_as_written(tmp_path):
    """The tutorial's files, made from its code blocks, give the output it shows."""
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    python = [b for lang, b in blocks if lang == "python"]
    op = next(b for b in python if "register_operator(" in b)
    test = next(b for b in python if "class TestMySoftsign" in b)
    conftest = next(b for b in python if b.startswith("# plain pytest"))
    toml = next(b for lang, b in blocks if lang == "toml")
    (tmp_path / "my_ops").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "my_ops" / "__init__.py").write_text("")
    (tmp_path / "my_ops" / "my_softsign_op.py").write_text(op)
    (tmp_path / "tests" / "test_my_softsign_op.py").write_text(test)
    (tmp_path / "tests" / "conftest.py").write_text(conftest)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "t"\nversion = "0"\n\n' + toml)
    shown = next(b for lang, b in blocks if b.startswith("$ opkit test my_softsign"))
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.run([sys.executable, "-m", "opkit", "test", "my_softsign"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=1800)
    assert p.returncode == 0, p.stdout + p.stderr
    for line in p.stdout.splitlines():
        assert line in shown, (line, shown)
    q = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "tests/"],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=1800)
    summary = re.search(r"(\d+ passed(, \d+ skipped)?)", q.stdout.splitlines()[-1]).group(1)
    pytest_shown = next(b for lang, b in blocks if b.startswith("$ python -m pytest tests/"))
    assert q.returncode == 0 and summary in pytest_shown, (summary, pytest_shown)
