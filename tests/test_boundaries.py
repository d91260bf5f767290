"""The package boundaries, read from the source (nothing is imported):

* no module reaches a private name (`_name`, or a `_module`) of another top-level package,
  neither by importing it nor as an attribute of something imported from there;
* the packages import each other without a cycle (the command line, `opkit.cli` and
  `opkit.__main__`, is its own layer on top);
* `opkit.framework` imports none of the other packages (it is the bottom layer).

The allowed imports are the table in docs/architecture.md ("Boundaries").
"""
from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("opkit", "harness", "checkers", "reference_ops")

# layer -> the layers it may import (besides itself)
ALLOWED = {
    "opkit.framework": set(),
    "opkit": {"opkit.framework"},
    "reference_ops": {"opkit", "opkit.framework"},
    # compat --programs replays saved programs and judges results with the harness's one
    # tolerance table (checkers/compat/programs.py); the JSON-only core imports neither
    "checkers": {"opkit", "opkit.framework", "harness"},
    "harness": {"opkit", "opkit.framework"},
    "opkit.cli": {"opkit", "opkit.framework", "harness", "checkers", "reference_ops"},
}

# Offenders in files other sessions are fixing at the time of writing (issue 15, item 3:
# library code importing the command line). Each entry must still offend (a stale entry
# fails), so the list only shrinks.
KNOWN_OFFENDERS: set = set()
# private reach-ins of the same kind ("<file>: reads/imports <name>"); the public seam
# exists (DeviceContextPool.places_in_use())
KNOWN_PRIVATE: set = set()


def _layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "opkit" and len(parts) > 1 and parts[1] in ("cli", "__main__"):
        return "opkit.cli"
    if parts[0] == "opkit" and len(parts) > 1 and parts[1] == "framework":
        return "opkit.framework"
    return parts[0]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _modules(root):
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            if "tests" in rel.parts:
                continue
            module = ".".join(rel.with_suffix("").parts)
            if module.endswith(".__init__"):
                module = module[: -len(".__init__")]
            yield rel, module, ast.parse(path.read_text(encoding="utf-8"), str(rel))


def _imports(tree):
    """(line, imported module, [names imported from it] or None, {local name: module})."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                target = alias.name if alias.asname else alias.name.split(".")[0]
                yield node.lineno, alias.name, None, {local: target}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, [a.name for a in node.names], \
                {a.asname or a.name: f"{node.module}.{a.name}" for a in node.names}


def scan():
    """(edges {(src layer, dst layer): [where]}, private reach-ins [message])."""
    return _scan(ROOT)


@functools.lru_cache(maxsize=4)
def _scan(root):
    edges, private = defaultdict(list), []
    for rel, module, tree in _modules(root):
        top = module.split(".")[0]
        src = _layer(module)
        foreign = {}  # local name -> dotted origin in another package
        for line, target, names, bound in _imports(tree):
            if target.split(".")[0] not in PACKAGES:
                continue
            dst = _layer(target)
            if dst != src:
                edges[(src, dst)].append(f"{rel}:{line}")
            if target.split(".")[0] == top:
                continue
            bad = [p for p in target.split(".") if _private(p)]
            bad += [n for n in names or () if _private(n)]
            if bad:
                private.append(f"{rel}:{line}: imports {', '.join(bad)} from {target}")
            foreign.update(bound)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr) and \
                    isinstance(node.value, ast.Name) and node.value.id in foreign:
                private.append(f"{rel}:{node.lineno}: reads {node.value.id}.{node.attr} "
                               f"({foreign[node.value.id]} is another package's)")
    return edges, private


def _offending_edges(edges):
    out = {}
    for (src, dst), where in edges.items():
        if dst not in ALLOWED.get(src, set()):
            out[(src, dst)] = where
    return out


def _short(message: str) -> str:
    where, what = message.split(": ", 1)
    return f"{where.rsplit(':', 1)[0]}: {what.split(' (')[0]}"


def test_no_private_name_of_another_package_is_used():
    _, private = scan()
    unexpected = [m for m in private if _short(m) not in KNOWN_PRIVATE]
    assert unexpected == [], "\n".join(unexpected)
    stale = KNOWN_PRIVATE - {_short(m) for m in private}
    assert not stale, f"fixed, remove from KNOWN_PRIVATE: {sorted(stale)}"


def test_every_import_between_packages_is_allowed():
    bad = _offending_edges(scan()[0])
    found = {(s, d, w.split(":")[0]) for (s, d), where in bad.items() for w in where}
    unexpected = sorted(found - KNOWN_OFFENDERS)
    assert unexpected == [], "\n".join(f"{w}: {s} imports {d}" for s, d, w in unexpected)
    stale = sorted(KNOWN_OFFENDERS - found)
    assert stale == [], f"fixed, remove from KNOWN_OFFENDERS: {stale}"


def test_opkit_framework_imports_no_other_package():
    edges, _ = scan()
    out = {dst: where for (src, dst), where in edges.items() if src == "opkit.framework"}
    assert out == {}, out


def test_no_import_cycle_between_the_packages():
    edges, _ = scan()
    known = {(s, d) for s, d, _ in KNOWN_OFFENDERS}
    graph = defaultdict(set)
    for src, dst in edges:
        if (src, dst) not in known:
            graph[src].add(dst)
    state, cycle = {}, []

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycle.append(path + [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert cycle == [], cycle


@pytest.mark.parametrize("source, problem", [
    ("from opkit.framework.executor import _prepare\n", "imports _prepare"),
    ("from opkit.framework import registry\nregistry._KERNELS.clear()\n", "reads registry._KERNELS"),
    ("import reference_ops._common as c\n", "imports _common"),
])
def test_the_scan_finds_a_reach_in(tmp_path, monkeypatch, source, problem):
    pkg = tmp_path / "harness"
    pkg.mkdir()
    (pkg / "bad.py").write_text(source)
    for other in PACKAGES:
        if other != "harness":
            (tmp_path / other).mkdir()
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    _, private = scan()
    assert len(private) == 1 and problem in private[0] and "harness/bad.py:" in private[0]


def test_the_scan_finds_a_forbidden_edge_and_a_cycle(tmp_path, monkeypatch):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "opkit" / "framework").mkdir()
    (tmp_path / "opkit" / "framework" / "x.py").write_text("import harness.y\n")
    (tmp_path / "harness" / "y.py").write_text("from opkit.framework import x\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    edges, _ = scan()
    assert _offending_edges(edges) == {("opkit.framework", "harness"):
                                       ["opkit/framework/x.py:1"]}
    with pytest.raises(AssertionError):
        test_no_import_cycle_between_the_packages()
