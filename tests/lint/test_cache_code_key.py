"""The lint cache is keyed on the linter's own code: an edited rule never serves the
results of its previous version."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from checkers.lint.cache import code_digest

ROOT = Path(__file__).resolve().parents[2]

RUN = """
import json, sys
from pathlib import Path
import checkers.lint
assert Path(checkers.lint.__file__).resolve().is_relative_to(Path.cwd().resolve()), checkers.lint.__file__
from checkers.lint.config import build_config
from checkers.lint.runner import lint_paths
config = build_config({}, None)
config.root = Path(sys.argv[1])
result = lint_paths([sys.argv[1]], config)
print(json.dumps([f.message for f in result.findings]))
"""

OP = ("from opkit import enforce\n\ndef check(ctx):\n    enforce(ctx.has_input('X'))\n")


def _lint(code_root: Path, project: Path) -> list:
    out = subprocess.run([sys.executable, "-c", RUN, str(project)], cwd=code_root,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_digest_changes_with_any_lint_source(tmp_path):
    copy = tmp_path / "lint"
    shutil.copytree(ROOT / "checkers" / "lint", copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = code_digest(copy)
    assert before == code_digest(copy)
    rule = copy / "rules" / "empty_enforce_message.py"
    rule.write_text(rule.read_text() + "\n# edited\n")
    assert code_digest(copy) != before


def test_edited_rule_is_not_served_from_the_cache(tmp_path):
    code_root = tmp_path / "code"
    shutil.copytree(ROOT / "checkers", code_root / "checkers",
                    ignore=shutil.ignore_patterns("__pycache__"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (project / "check.py").write_text(OP)

    first = _lint(code_root, project)
    assert first == ["enforce(...) has no error message"]
    assert len(list((project / ".opkit_cache" / "lint").glob("*.json"))) == 1
    assert _lint(code_root, project) == first  # served from the cache

    rule = code_root / "checkers" / "lint" / "rules" / "empty_enforce_message.py"
    text = rule.read_text()
    assert 'f"{kind}(...) has no error message"' in text
    rule.write_text(text.replace('f"{kind}(...) has no error message"',
                                 'f"{kind}(...) lacks a message (edited rule)"'))
    assert _lint(code_root, project) == ["enforce(...) lacks a message (edited rule)"]
    assert len(list((project / ".opkit_cache" / "lint").glob("*.json"))) == 2
