"""docs/rules.md is generated from the rules; the lint entry points import nothing heavy."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from checkers.lint import docs

ROOT = Path(__file__).resolve().parents[2]


def test_rules_md_is_up_to_date():
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == docs.generate(), "docs/rules.md is stale: run `python -m checkers.lint.docs`"


def test_catalog_tables_are_generated_from_the_rule_classes():
    path = ROOT / "checkers" / "lint" / "catalog.py"
    current = path.read_text(encoding="utf-8")
    assert current == docs.catalog_source(current), "catalog.py is stale: run `python -m checkers.lint.docs`"
    from checkers.lint import catalog
    from checkers.lint.rules import CATALOG_RULES

    assert catalog.RULES == {r.code: (r.name, r.summary) for r in CATALOG_RULES}
    assert catalog.TRIGGERS == {r.code: tuple(r.triggers) for r in CATALOG_RULES if r.triggers}


def test_docs_check_mode_reports_a_stale_file(tmp_path, monkeypatch):
    stale = tmp_path / "rules.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(docs, "TARGET", stale)
    assert docs.main(["--check"]) == 1
    monkeypatch.setattr(docs, "TARGET", ROOT / "docs" / "rules.md")
    assert docs.main(["--check"]) == 0


def test_rules_md_mentions_every_rule():
    text = docs.generate()
    for code in ("OPK000", "OPK001", "OPK002", "OPK003", "OPK004", "OPK005", "OPK006", "OPK007", "OPK008"):
        assert f"## {code} " in text


def test_lint_modules_do_not_import_numpy_or_the_framework():
    code = ("import sys\nimport checkers, checkers.lint, checkers.lint.runner, checkers.lint.engine\n"
            "import checkers.lint.rules, checkers.lint.report.text\n"
            "bad = sorted(m for m in sys.modules if m == 'numpy' or m.startswith('opkit.framework'))\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""


def test_cli_lint_module_is_light():
    # `import opkit` installs the op-package loaders in opkit.framework.packages (a small
    # module that imports nothing): the framework's registry, tensors, ... stay unloaded
    code = ("import sys\nimport opkit.cli.lint\n"
            "heavy = sorted(m for m in sys.modules if m in ('numpy', 'libcst', 'rich') "
            "or m.startswith('opkit.framework') and m not in ('opkit.framework', "
            "'opkit.framework.packages'))\nprint(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "", f"importing opkit.cli.lint pulled in {out} (is opkit/__init__.py lazy?)"


def test_one_file_lint_does_not_import_numpy(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    code = ("import sys\nfrom opkit.cli.main import main\nrc = main(['lint', '--no-cache', 'a.py'])\n"
            "print(rc, 'numpy' in sys.modules, 'libcst' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == "0 False False"
