"""opkit_torch uses the harness's public seams only, and nothing of opkit's imports it."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("harness", "opkit", "checkers", "reference_ops", "opkit_paddle")


def _imports(path: Path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [a.name for a in node.names], node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, [], node.lineno


def _private_uses(folder: Path):
    for path in sorted(folder.rglob("*.py")):
        for module, names, line in _imports(path):
            if module.split(".")[0] not in OURS:
                continue
            parts = module.split(".") + names
            if any(p.startswith("_") and not p.startswith("__") for p in parts):
                yield f"{path.relative_to(ROOT)}:{line}: {module} {names}"


@pytest.mark.no_torch_needed
def test_opkit_torch_reaches_no_private_name_of_another_package():
    assert list(_private_uses(ROOT / "opkit_torch")) == []


@pytest.mark.no_torch_needed
def test_the_scan_finds_a_planted_reach_in(tmp_path):
    (tmp_path / "bad.py").write_text("from harness.backend.seam import _private\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert len(list(_private_uses(tmp_path))) == 1
    finally:
        ROOT = saved


@pytest.mark.no_torch_needed
def test_no_package_of_opkit_imports_the_torch_plugin():
    for package in OURS:
        for path in (ROOT / package).rglob("*.py"):
            for module, _names, line in _imports(path):
                assert module.split(".")[0] != "opkit_torch", f"{path}:{line}"
