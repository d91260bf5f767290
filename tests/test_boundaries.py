"""The package boundaries, read from the source (nothing is imported), module by module.

An *import* is every way one module of the four packages reaches another: `import` and
`from ... import` statements anywhere (module level or inside a function, relative ones
resolved), and a dotted module name in a string (`importlib.import_module("opkit.plugins")`,
a registry table of `"harness.checks.values.dtypes:check"`, an entry list naming
`"reference_ops.gpu"`; a bare top-level name counts when passed to `import_module` /
`__import__`). On that graph:

* each layer imports only the layers below it (the table in docs/architecture.md,
  "Boundaries"): the non-CLI `opkit` modules import nothing of `harness`, `checkers` or
  `reference_ops`, and `opkit.framework` nothing above it;
* nothing imports the command line (`opkit.cli`, `opkit.__main__`) except itself;
* no import cycle inside a package (function-level imports and strings included);
* a private name (`_name`, or a `_module`) belongs to the package that holds it: only that
  package's modules (and its subpackages') may import it or read it as an attribute.
"""
from __future__ import annotations

import ast
import functools
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("opkit", "harness", "checkers", "reference_ops", "opkit_fluid", "opkit_paddle",
            "opkit_torch")
# the plugins: backends (and checks) reached only through entry points
PLUGINS = ("opkit_fluid", "opkit_paddle", "opkit_torch")

# layer -> the layers it may import (besides itself)
ALLOWED = {
    "opkit.framework": set(),
    "opkit": {"opkit.framework"},
    "reference_ops": {"opkit", "opkit.framework"},
    # compat --programs judges replayed results with the harness's tolerance table, which
    # lives in opkit.tolerances for that reason: checkers never import harness
    "checkers": {"opkit", "opkit.framework"},
    "harness": {"opkit", "opkit.framework"},
    # the backends plug into the harness through the entry-point groups `opkit.backends`
    # and `opkit.checks`; the harness never names them. opkit's own framework as a backend
    # (opkit_fluid) is the one the other two ask for opkit's declarations of an op
    "opkit_fluid": {"opkit", "opkit.framework", "harness"},
    "opkit_paddle": {"opkit", "opkit.framework", "harness", "opkit_fluid"},
    "opkit_torch": {"opkit", "opkit.framework", "harness", "opkit_fluid"},
    "opkit.cli": {"opkit", "opkit.framework", "harness", "checkers", "reference_ops"},
}

# Offenders in files other sessions are fixing at the time of writing. Each entry must still
# offend (a stale entry fails), so the lists only shrink.
KNOWN_OFFENDERS: set = set()
KNOWN_PRIVATE: set = set()

# Import cycles inside a package that are known and not yet broken. An entry is (the
# modules the cycle runs through, the prefixes of the other modules it may take along): a
# strongly connected set is allowed when it holds every one of the first and nothing outside
# both. An entry that matches no cycle any more fails (stale), so the list only shrinks.
KNOWN_CYCLES: dict = {}


def _allowed_cycle(cycle) -> str | None:
    for name, (core, extra) in KNOWN_CYCLES.items():
        if core <= set(cycle) and all(m in core or m.startswith(extra) for m in cycle):
            return name
    return None


# Private modules imported from outside their package, each still needed (a stale entry
# fails). (harness.checks._support was renamed harness.backend.context.)
KNOWN_PRIVATE_MODULES: set = set()


# -- reading the sources -------------------------------------------------------------------
def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "opkit" and len(parts) > 1 and parts[1] in ("cli", "__main__"):
        return "opkit.cli"
    if parts[0] == "opkit" and len(parts) > 1 and parts[1] == "framework":
        return "opkit.framework"
    return parts[0]


@functools.lru_cache(maxsize=4)
def _sources(root: Path) -> dict:
    """{module: (relative path, is a package __init__, tree)}."""
    out = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            if "tests" in rel.parts:
                continue
            module = ".".join(rel.with_suffix("").parts)
            is_package = module.endswith(".__init__")
            if is_package:
                module = module[: -len(".__init__")]
            out[module] = (rel, is_package, ast.parse(path.read_text(encoding="utf-8"),
                                                      str(rel)))
    return out


def _package_of(module: str, sources) -> str:
    return module if sources[module][1] else module.rpartition(".")[0]


def _resolve(name: str, sources) -> str | None:
    """The module a dotted name lives in (the longest known prefix)."""
    while name and name not in sources:
        name = name.rpartition(".")[0]
    return name or None


@functools.lru_cache(maxsize=4)
def graph(root: Path = ROOT):
    """[(src module, dst module, 'path:line', kind, [names imported] or None)]; kind is
    'import', 'from' or 'string'."""
    sources = _sources(root)
    edges = []
    for module, (rel, _, tree) in sources.items():
        package = _package_of(module, sources)
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in PACKAGES:
                        dst = _resolve(alias.name, sources)
                        if dst:
                            edges.append((module, dst, where, "import", None, alias.name))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([base] if base else []))
                if base.split(".")[0] not in PACKAGES:
                    continue
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in sources:          # a submodule
                        edges.append((module, full, where, "from", None, full))
                    else:
                        dst = _resolve(base, sources)
                        if dst:
                            edges.append((module, dst, where, "from", [alias.name], base))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.split(":", 1)[0]
                if "." in text and text.split(".")[0] in PACKAGES and text in sources:
                    edges.append((module, text, where, "string", None, text))
            elif isinstance(node, ast.Call) and node.args and \
                    isinstance(node.args[0], ast.Constant) and \
                    isinstance(node.args[0].value, str):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else \
                    getattr(func, "id", "")
                text = node.args[0].value
                if name in ("import_module", "__import__") and text in PACKAGES:
                    edges.append((module, text, where, "string", None, text))
    return edges


# -- the package layers ----------------------------------------------------------------------
def scan():
    """(edges {(src layer, dst layer): [where]}, private reach-ins [message])."""
    edges = defaultdict(list)
    for src, dst, where, _, _, _ in graph(ROOT):
        if _layer(src) != _layer(dst):
            edges[(_layer(src), _layer(dst))].append(where)
    return edges, private_reach_ins()


def _offending_edges(edges):
    return {(s, d): w for (s, d), w in edges.items() if d not in ALLOWED.get(s, set())}


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


def test_the_opkit_library_imports_no_harness_checkers_or_builtin_ops():
    """Also not through a string (importlib): the library does not know the packages that
    build on it; installed op packages are found through entry points."""
    bad = [f"{where}: {src} imports {dst} ({kind})"
           for src, dst, where, kind, _, _ in graph(ROOT)
           if _layer(src) in ("opkit", "opkit.framework")
           and dst.split(".")[0] in ("harness", "checkers", "reference_ops")]
    assert bad == [], "\n".join(bad)


def test_the_harness_imports_no_plugin():
    """harness reaches a backend plugin (opkit's own included) only through its entry point
    (harness.backend.dispatch, harness.checks.catalog)."""
    bad = harness_plugin_imports()
    assert bad == [], "\n".join(bad)


def harness_plugin_imports(root: Path = ROOT) -> list:
    return [f"{where}: {src} imports {dst} ({kind})"
            for src, dst, where, kind, _, _ in graph(root)
            if src.split(".")[0] == "harness" and dst.split(".")[0] in PLUGINS]


def test_the_plugin_rule_finds_its_offender(tmp_path, monkeypatch):
    root = _tree(tmp_path, {"harness/backend/d.py": "from opkit_fluid.backend import B\n",
                            "opkit_fluid/backend.py": "B = 1\n"}, monkeypatch)
    assert [f.split(" (")[0] for f in harness_plugin_imports(root)] == [
        "harness/backend/d.py:1: harness.backend.d imports opkit_fluid.backend"]


def test_loading_the_paddle_plugin_imports_no_paddle():
    """paddle is optional (opkit-dl[paddle]): the plugin object loads without it."""
    import subprocess
    import sys

    code = ("import sys\nfrom harness.backend import dispatch as backends\n"
            "print(backends.compat_mode('paddle') is backends.plugin('paddle').compat, 'paddle' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.split() == ["True", "False"]


def test_nothing_imports_the_command_line():
    bad = [f"{where}: {src} imports {dst}" for src, dst, where, _, _, _ in graph(ROOT)
           if _layer(dst) == "opkit.cli" and _layer(src) != "opkit.cli"]
    assert bad == [], "\n".join(bad)


def test_no_import_cycle_between_the_packages():
    edges, _ = scan()
    known = {(s, d) for s, d, _ in KNOWN_OFFENDERS}
    layers = defaultdict(set)
    for src, dst in edges:
        if (src, dst) not in known:
            layers[src].add(dst)
    assert _cycles(layers) == [], _cycles(layers)


# -- cycles inside a package -------------------------------------------------------------------
def _cycles(adjacency) -> list[list[str]]:
    """The strongly connected sets of more than one node (Tarjan), sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(adjacency.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(adjacency):
        if v not in index:
            visit(v)
    return sorted(out)


def module_cycles(root: Path = ROOT) -> list[list[str]]:
    adjacency = defaultdict(set)
    for src, dst, _, _, _, _ in graph(root):
        if src != dst and src.split(".")[0] == dst.split(".")[0]:
            adjacency[src].add(dst)
    return _cycles(adjacency)


def _cycle_text(cycle, root=ROOT) -> str:
    members = set(cycle)
    lines = [f"cycle {' <-> '.join(cycle)}:"]
    for src, dst, where, kind, _, _ in graph(root):
        if src in members and dst in members and src != dst:
            lines.append(f"  {where}: {src} -> {dst} ({kind})")
    return "\n".join(lines)


def test_no_import_cycle_inside_a_package():
    cycles = module_cycles()
    unexpected = [c for c in cycles if _allowed_cycle(c) is None]
    assert unexpected == [], "\n".join(_cycle_text(c) for c in unexpected)
    stale = sorted(set(KNOWN_CYCLES) - {_allowed_cycle(c) for c in cycles})
    assert stale == [], f"no longer a cycle, remove from KNOWN_CYCLES: {stale}"


# -- private names ---------------------------------------------------------------------------
def _owner(module: str, name: str | None, sources) -> str | None:
    """The package a private name belongs to (None when the name is not private): a
    `_module` belongs to the package holding it, a `_name` to its module's package."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            return ".".join(parts[:i])
    if name and _private(name):
        if f"{module}.{name}" in sources or (module in sources and sources[module][1]):
            return module
        return module.rpartition(".")[0]
    return None


def _inside(package: str, owner: str) -> bool:
    return package == owner or package.startswith(owner + ".")


# underscored names that are public API (namedtuple's)
_PUBLIC_UNDERSCORED = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}


@functools.lru_cache(maxsize=4)
def _private_reach_ins(root: Path):
    sources = _sources(root)
    out = []
    imported_modules = defaultdict(dict)    # module -> {local name: module it names}
    for src, _dst, where, kind, names, spelled in graph(root):
        if kind == "string":
            continue
        package = _package_of(src, sources)
        for name in names or [None]:
            owner = _owner(spelled, name, sources)
            if owner is not None and not _inside(package, owner):
                private_module = any(_private(p) for p in spelled.split("."))
                target = spelled if private_module else f"{spelled}.{name}"
                text = f"imports {spelled}" if private_module or not name else \
                    f"imports {name} from {spelled}"
                out.append((f"{where}: {text}", target))
    for module, (rel, _, tree) in sources.items():
        package = _package_of(module, sources)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in PACKAGES:
                        local = alias.asname or alias.name.split(".")[0]
                        imported_modules[module][local] = alias.name if alias.asname \
                            else alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                    node.module.split(".")[0] in PACKAGES:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    # a module, or an object (class, function, instance) of one: what it
                    # holds privately is that module's package's
                    imported_modules[module][alias.asname or alias.name] = full \
                        if full in sources else _resolve(node.module, sources)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)) or \
                    node.attr in _PUBLIC_UNDERSCORED:
                continue
            chain, base = [], node.value
            while isinstance(base, ast.Attribute):      # harness.backend.seam._x, Check.attr._y
                chain.insert(0, base.attr)
                base = base.value
            if not isinstance(base, ast.Name) or base.id not in imported_modules[module]:
                continue
            root = imported_modules[module][base.id]
            if root is None:
                continue
            target = _resolve(".".join([root, *chain]), sources) or root
            if target not in sources:
                continue
            owner = _package_of(target, sources)
            if not _inside(package, owner):
                spelled = ".".join([base.id, *chain, node.attr])
                out.append((f"{rel}:{node.lineno}: reads {spelled} "
                            f"({target} is another package's)", target))
    return out


def private_reach_ins(root: Path = ROOT) -> list[str]:
    return [m for m, _ in _private_reach_ins(root)]


def _short(message: str) -> str:
    where, what = message.split(": ", 1)
    return f"{where.rsplit(':', 1)[0]}: {what.split(' (')[0]}"


def test_no_private_name_of_another_package_or_subpackage_is_used():
    found = _private_reach_ins(ROOT)
    unexpected = [m for m, target in found if _short(m) not in KNOWN_PRIVATE and
                  not any(target == k or target.startswith(k + ".")
                          for k in KNOWN_PRIVATE_MODULES)]
    assert unexpected == [], "\n".join(unexpected)
    stale = KNOWN_PRIVATE - {_short(m) for m, _ in found}
    assert not stale, f"fixed, remove from KNOWN_PRIVATE: {sorted(stale)}"
    used = {k for k in KNOWN_PRIVATE_MODULES for _, t in found
            if t == k or t.startswith(k + ".")}
    assert used == KNOWN_PRIVATE_MODULES, \
        f"no longer reached from outside, remove: {sorted(KNOWN_PRIVATE_MODULES - used)}"


# -- the scan finds what it should (on made-up trees) ------------------------------------------
def _tree(tmp_path, files: dict, monkeypatch):
    for package in PACKAGES:
        (tmp_path / package).mkdir(exist_ok=True)
        (tmp_path / package / "__init__.py").touch()
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.parent.name != tmp_path.name and not (path.parent / "__init__.py").exists():
            (path.parent / "__init__.py").touch()
        path.write_text(text)
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    return tmp_path


@pytest.mark.parametrize("source, problem", [
    ("from opkit.framework.executor import _prepare\n", "imports _prepare"),
    ("from opkit.framework import registry\nregistry._KERNELS.clear()\n",
     "reads registry._KERNELS"),
    ("import reference_ops._common as c\n", "imports reference_ops._common"),
    # a subpackage's private module, from the parent package
    ("from harness.checks._support import x\n", "imports harness.checks._support"),
    # attribute access: through a dotted module name, or on an object of another package
    ("import opkit.framework.registry\nopkit.framework.registry._KERNELS.clear()\n",
     "reads opkit.framework.registry._KERNELS"),
    ("from opkit.framework.executor import Executor\nExecutor._prepare(None)\n",
     "reads Executor._prepare"),
    ("from opkit.framework.executor import Executor as E\nE.plan._cache\n",
     "reads E.plan._cache"),
])
def test_the_scan_finds_a_reach_in(tmp_path, monkeypatch, source, problem):
    root = _tree(tmp_path, {"harness/bad.py": source, "opkit/framework/executor.py": "",
                            "opkit/framework/registry.py": "", "reference_ops/_common.py": "",
                            "harness/checks/_support.py": ""}, monkeypatch)
    found = private_reach_ins(root)
    assert len(found) == 1 and problem in found[0] and "harness/bad.py:" in found[0], found


@pytest.mark.parametrize("plugin", list(PLUGINS))
def test_the_scan_finds_a_plugin_reading_a_harness_private(tmp_path, monkeypatch, plugin):
    root = _tree(tmp_path, {f"{plugin}/backend.py": "from harness.executing import pool\n"
                                                    "pool._record(1)\n",
                            "harness/executing/pool.py": ""}, monkeypatch)
    found = private_reach_ins(root)
    assert len(found) == 1 and "reads pool._record" in found[0] and \
        f"{plugin}/backend.py:2" in found[0], found


def test_a_package_may_use_its_own_private_names(tmp_path, monkeypatch):
    root = _tree(tmp_path, {"reference_ops/_common.py": "",
                            "reference_ops/gpu/kernels.py": "from reference_ops import _common\n",
                            "reference_ops/relu_op.py": "from reference_ops._common import _f\n"},
                 monkeypatch)
    assert private_reach_ins(root) == []


def test_the_scan_finds_a_forbidden_edge_and_a_cycle(tmp_path, monkeypatch):
    _tree(tmp_path, {"opkit/framework/x.py": "import harness.y\n",
                     "harness/y.py": "from opkit.framework import x\n"}, monkeypatch)
    edges, _ = scan()
    assert _offending_edges(edges) == {("opkit.framework", "harness"):
                                       ["opkit/framework/x.py:1"]}
    with pytest.raises(AssertionError):
        test_no_import_cycle_between_the_packages()


def test_the_scan_finds_checkers_importing_the_harness(tmp_path, monkeypatch):
    _tree(tmp_path, {"checkers/compat/programs.py":
                     "def judge():\n    from harness.judging.tolerances import output_tolerance\n",
                     "harness/judging/tolerances.py": ""}, monkeypatch)
    edges, _ = scan()
    assert _offending_edges(edges) == {("checkers", "harness"):
                                       ["checkers/compat/programs.py:2"]}
    with pytest.raises(AssertionError, match="checkers imports harness"):
        test_every_import_between_packages_is_allowed()


def test_the_scan_sees_imports_inside_functions_and_by_string(tmp_path, monkeypatch):
    root = _tree(tmp_path, {
        "opkit/framework/registry.py": "def load():\n    import importlib\n"
                                       "    importlib.import_module('opkit.plugins')\n",
        "opkit/plugins.py": "def f():\n    from opkit.framework import registry\n",
        "opkit/docs_gen.py": "import importlib\nimportlib.import_module('reference_ops')\n",
        "opkit/cli/main.py": "", "harness/x.py": "import opkit.cli.main\n"}, monkeypatch)
    assert module_cycles(root) == [["opkit.framework.registry", "opkit.plugins"]]
    edges, _ = scan()
    assert ("opkit.framework", "opkit") in _offending_edges(edges)
    with pytest.raises(AssertionError, match="docs_gen"):
        test_the_opkit_library_imports_no_harness_checkers_or_builtin_ops()
    with pytest.raises(AssertionError, match="harness/x.py:1"):
        test_nothing_imports_the_command_line()


# -- the harness's shape (docs/architecture.md, "The harness") -------------------------------
def _defines_check(tree) -> bool:
    return any(isinstance(node, ast.Assign) and
               any(isinstance(t, ast.Name) and t.id == "CHECK" for t in node.targets)
               for node in tree.body)


CHECK_PACKAGES = ("harness.checks.", "opkit_fluid.checks.")


def check_modules(root: Path = ROOT) -> set:
    """The check modules: those under harness.checks (and opkit_fluid.checks, the Fluid
    family's) defining CHECK (a group's helpers, `shared`, `siblings`, ..., define none)."""
    return {m for m, (_, _, tree) in _sources(root).items()
            if m.startswith(CHECK_PACKAGES) and _defines_check(tree)}


def check_cross_imports(root: Path = ROOT) -> list:
    """A check module importing another check module, or a module outside harness.checks
    importing a check (only the catalog names them, by string)."""
    checks = check_modules(root)
    bad = []
    for src, dst, where, _, _, _ in graph(root):
        if dst not in checks or src == dst:
            continue
        if src in checks or (src != "harness.checks.catalog" and
                             src.startswith(("harness", "opkit_fluid"))):
            bad.append(f"{where}: {src} imports {dst}")
    return bad


def prepared_op_makers(root: Path = ROOT) -> list:
    """Calls that build a PreparedOp anywhere in harness but the seam: harness/backend/seam.py's
    `make`, and the backends it dispatches to (harness/backend/: opkit's own)."""
    bad = []
    for module, (rel, _, tree) in _sources(root).items():
        if not module.startswith("harness") or module == "harness.backend.seam" or \
                module.startswith("harness.backend."):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name == "PreparedOp":
                    bad.append(f"{rel}:{node.lineno}: builds a PreparedOp")
    return bad


def _environ_key(node):
    """The key a node reads from the environment (`os.environ[K]`, `os.environ.get(K)`,
    `os.getenv(K)`), or None when the node reads nothing."""
    def is_environ(n):
        return (isinstance(n, ast.Attribute) and n.attr == "environ") or \
            (isinstance(n, ast.Name) and n.id == "environ")
    if isinstance(node, ast.Subscript) and is_environ(node.value) and \
            isinstance(node.ctx, ast.Load):
        return node.slice
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        if node.func.attr == "get" and is_environ(node.func.value):
            return node.args[0]
        if node.func.attr == "getenv":
            return node.args[0]
    return None


def opkit_env_readers(root: Path = ROOT) -> list:
    """Reads of an OPKIT_* variable (or of a variable named by a non-literal key, which may
    be one) anywhere in harness but harness/options.py."""
    bad = []
    for module, (rel, _, tree) in _sources(root).items():
        if not module.startswith("harness") or module == "harness.options":
            continue
        for node in ast.walk(tree):
            key = _environ_key(node)
            if key is None:
                continue
            literal = isinstance(key, ast.Constant) and isinstance(key.value, str)
            if not literal or key.value.startswith("OPKIT_"):
                bad.append(f"{rel}:{node.lineno}: reads the environment "
                           f"({ast.unparse(key)}); only harness.options may")
    return bad


REGISTRY = ("opkit.registry", "opkit.framework.registry")
# check modules that read opkit's registry, each with its reason (a stale entry fails)
KNOWN_REGISTRY_READERS = {
    # the clean process's child (run by path, opkit only: capability `clean_process`)
    "opkit_fluid.checks.clean_child": "loads the op files and runs opkit's own op",
    # the cross-process determinism child: loads the op files whose op opkit's registry
    # lacks before it runs the case (loading, not judging)
    "harness.checks.runs.hashseed": "imports an op file only where opkit lacks the op",
}


def registry_readers(root: Path = ROOT) -> dict:
    """{check module: 'path:line'} of the check modules that import opkit's op registry: a
    check reads an op through the backend contract (harness.backend.dispatch), never a framework's
    registry."""
    found = {}
    for src, dst, where, _, _, _ in graph(root):
        if src.startswith(CHECK_PACKAGES) and dst in REGISTRY:
            found.setdefault(src, where)
    return found


def test_no_check_reads_opkits_registry():
    found = registry_readers()
    assert {m: w for m, w in found.items() if m not in KNOWN_REGISTRY_READERS} == {}
    assert set(KNOWN_REGISTRY_READERS) <= set(found), "stale KNOWN_REGISTRY_READERS entry"


def test_checks_never_import_each_other():
    assert check_cross_imports() == []


def test_only_the_seam_builds_a_prepared_op():
    assert prepared_op_makers() == []


def test_only_options_reads_opkit_variables():
    assert opkit_env_readers() == []


def test_the_shape_rules_find_their_offenders(tmp_path, monkeypatch):
    root = _tree(tmp_path, {
        "harness/checks/g/a.py": "from harness.checks.h import b\nCHECK = 1\n",
        "harness/checks/h/b.py": "CHECK = 2\n",
        "harness/checks/h/helper.py": "from harness.checks.g import a\n",
        "harness/checks/catalog.py": "CHECKS = ['harness.checks.g.a', 'harness.checks.h.b']\n",
        "harness/backend/seam.py": "class PreparedOp: pass\nx = PreparedOp()\n",
        "harness/other.py": "import os\nfrom harness.backend.seam import PreparedOp\n"
                            "p = PreparedOp()\nv = os.environ.get('OPKIT_SEED')\n"
                            "w = os.environ.get('NO_COLOR')\nk = 'OPKIT_X'\nu = os.getenv(k)\n",
        "harness/options.py": "import os\nv = os.environ.get('OPKIT_SEED')\n",
        "harness/checks/c.py": "def f():\n    from opkit.registry import op_info\n",
        "opkit_fluid/checks/f.py": "from harness.checks.g import a\nCHECK = 3\n",
        "opkit_fluid/checks/r.py": "from opkit.registry import op_info\n",
        "opkit/registry.py": ""}, monkeypatch)
    assert registry_readers(root) == {"harness.checks.c": "harness/checks/c.py:2",
                                      "opkit_fluid.checks.r": "opkit_fluid/checks/r.py:1"}
    assert check_cross_imports(root) == [
        "harness/checks/g/a.py:1: harness.checks.g.a imports harness.checks.h.b",
        "harness/checks/h/helper.py:1: harness.checks.h.helper imports harness.checks.g.a",
        "opkit_fluid/checks/f.py:1: opkit_fluid.checks.f imports harness.checks.g.a"]
    assert prepared_op_makers(root) == ["harness/other.py:3: builds a PreparedOp"]
    found = opkit_env_readers(root)
    assert [f.split(": reads")[0] for f in found] == ["harness/other.py:4", "harness/other.py:7"]


# -- the harness by role (docs/architecture.md, "The harness by role") --------------------------
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_MODULES_PER_FOLDER = 12


def _marked(text: str, name: str) -> str:
    """The part of a doc between `<!-- name -->` and `<!-- /name -->`."""
    return text.split(f"<!-- {name} -->", 1)[1].split(f"<!-- /{name} -->", 1)[0]


def harness_layers(doc: Path = ARCHITECTURE) -> list[list[str]]:
    """The rows of the layer table, the lowest layer first: each the modules or packages it
    names."""
    rows = []
    for line in _marked(doc.read_text(encoding="utf-8"), "layers").splitlines():
        if line.startswith("| `"):
            rows.append(re.findall(r"`(harness[\w.]*)`", line.split("|")[1]))
    return rows


def _row(module: str, rows) -> int | None:
    """The row of a module: the row naming its longest prefix (`harness` alone names the
    package's __init__ only)."""
    best = None
    for i, row in enumerate(rows):
        for name in row:
            hit = module == name or (name != "harness" and module.startswith(name + "."))
            if hit and (best is None or len(name) > best[1]):
                best = (i, len(name))
    return None if best is None else best[0]


def layer_violations(root: Path = ROOT, doc: Path = ARCHITECTURE) -> list:
    """A harness module in no row of the layer table, or importing a module of a lower row
    (function-level imports and strings included)."""
    rows = harness_layers(doc)
    bad = [f"{module} is in no row of the layer table ({doc.name})"
           for module in sorted(_sources(root))
           if module.split(".")[0] == "harness" and _row(module, rows) is None]
    for src, dst, where, _, _, _ in graph(root):
        if src.split(".")[0] != "harness" or dst.split(".")[0] != "harness":
            continue
        a, b = _row(src, rows), _row(dst, rows)
        if a is not None and b is not None and b > a:
            bad.append(f"{where}: {src} ({', '.join(rows[a])}) imports {dst} "
                       f"({', '.join(rows[b])}, a lower row)")
    return bad


def crowded_folders(root: Path = ROOT, limit: int = MAX_MODULES_PER_FOLDER) -> list:
    """Folders of harness with more than `limit` modules (an __init__ and subfolders not
    counted)."""
    count = Counter(rel.parent.as_posix() for module, (rel, is_package, _)
                    in _sources(root).items()
                    if module.split(".")[0] == "harness" and not is_package)
    return [f"{folder}: {n} modules (at most {limit})"
            for folder, n in sorted(count.items()) if n > limit]


def one_check_helpers_outside_checks(root: Path = ROOT) -> list:
    """A harness module outside harness/checks/ that serves one check only (every module
    importing it is that one check): it belongs beside the check, in its group."""
    checks = check_modules(root)
    importers = defaultdict(set)
    for src, dst, _, _, _, _ in graph(root):
        if src != dst:
            importers[dst].add(src)
    bad = []
    for module, (rel, is_package, _) in sorted(_sources(root).items()):
        users = importers[module]
        if module.split(".")[0] == "harness" and not module.startswith("harness.checks") \
                and not is_package and len(users) == 1 and users <= checks:
            bad.append(f"{rel}: serves one check only ({next(iter(users))})")
    return bad


# Imports up the layer table that are known and not yet removed: (src, dst) -> why. An entry
# that no longer offends fails (stale), so the list only shrinks.
KNOWN_LAYER_OFFENDERS: dict = {}


def test_the_harness_imports_down_its_layer_table():
    found = layer_violations()
    known = [f for f in found if any(f" {src} (" in f and f" imports {dst} (" in f
                                     for src, dst in KNOWN_LAYER_OFFENDERS)]
    assert [f for f in found if f not in known] == []
    stale = [k for k in KNOWN_LAYER_OFFENDERS
             if not any(f" {k[0]} (" in f and f" imports {k[1]} (" in f for f in known)]
    assert stale == [], f"no longer offends, remove from KNOWN_LAYER_OFFENDERS: {stale}"


def test_no_harness_folder_holds_more_than_a_dozen_modules():
    assert crowded_folders() == []


def test_no_module_outside_the_checks_serves_one_check():
    assert one_check_helpers_outside_checks() == []


def test_the_role_rules_find_their_offenders(tmp_path, monkeypatch):
    doc = tmp_path / "architecture.md"
    doc.write_text("<!-- layers -->\n| layer | may import |\n| --- | --- |\n"
                   "| `harness.backend` | nothing |\n| `harness.judging` | above |\n"
                   "| `harness.checks`, `harness.api` | above |\n"
                   "| `harness` (its __init__) | above |\n<!-- /layers -->\n")
    files = {"harness/backend/seam.py": "def f():\n    from harness.judging import grade\n",
             "harness/judging/grade.py": "from harness.backend import seam\n",
             "harness/checks/g/a.py": "from harness.judging import grade\n"
                                      "from harness.judging import only_a\nCHECK = 1\n",
             "harness/checks/g/b.py": "from harness.judging import grade\nCHECK = 2\n",
             "harness/judging/only_a.py": "", "harness/stray.py": ""}
    files.update({f"harness/judging/m{i}.py": "" for i in range(11)})
    root = _tree(tmp_path, files, monkeypatch)
    assert layer_violations(root, doc) == [
        "harness.stray is in no row of the layer table (architecture.md)",
        "harness/backend/seam.py:2: harness.backend.seam (harness.backend) imports "
        "harness.judging.grade (harness.judging, a lower row)"]
    assert crowded_folders(root) == ["harness/judging: 13 modules (at most 12)"]
    assert one_check_helpers_outside_checks(root) == [
        "harness/judging/only_a.py: serves one check only (harness.checks.g.a)"]


# -- the traced walk of `opkit test relu` (docs/architecture.md) ------------------------------
_TRACER = """
import os, sys, threading
out, seen = sys.argv[1], set()
def importing(frame):
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") != "__main__":
            return True
        frame = frame.f_back
    return False
def tracer(frame, event, arg):
    name = frame.f_globals.get("__name__", "")
    if name.split(".")[0] == "harness" and name not in seen and not importing(frame):
        seen.add(name)
        with open(out, "a") as f:
            f.write(name + "\\n")
sys.settrace(tracer)
threading.settrace(tracer)
os.register_at_fork(after_in_child=seen.clear)
"""


def traced_modules(code: str) -> set:
    """The harness modules whose functions run while a fresh interpreter runs `code`, forked
    children included (what runs while a module is imported does not count)."""
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "walk.txt"
        out.touch()
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPKIT_")}
        env.update(OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
        subprocess.run([sys.executable, "-c", _TRACER + code, str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
        return set(out.read_text().split())


def documented_walk(doc: Path = ARCHITECTURE) -> set:
    walk = set()
    for line in _marked(doc.read_text(encoding="utf-8"), "walk").splitlines():
        names = re.findall(r"`([\w.]+)`", line)
        if line.startswith("- `") and names:
            folder, *modules = names
            walk |= {folder if m == "__init__" else f"{folder}.{m}" for m in modules}
    return walk


def walk_mismatch(walk: set, documented: set) -> list:
    return [f"ran, not in docs/architecture.md's walk: {m}" for m in sorted(walk - documented)] \
        + [f"in docs/architecture.md's walk, did not run: {m}" for m in sorted(documented - walk)]


_RELU = ("from opkit.cli.main import main\ntry:\n    main(['test', 'relu', '--seed', '2024'])\n"
         "except SystemExit:\n    pass\n")


def test_the_traced_walk_of_opkit_test_relu_is_the_documented_one():
    assert walk_mismatch(traced_modules(_RELU), documented_walk()) == []


def test_the_walk_tracer_sees_forked_calls_not_imports():
    walk = traced_modules("import os\nimport harness.reporting.rootcause\n"
                          "from harness.reporting import error_text\npid = os.fork()\n"
                          "if pid == 0:\n    error_text.first_line(ValueError('x'))\n"
                          "    os._exit(0)\nos.waitpid(pid, 0)\n")
    assert walk == {"harness.reporting.error_text"}
    documented = documented_walk()
    planted = sorted(documented)[0]
    assert walk_mismatch(documented - {planted}, documented) == [
        f"in docs/architecture.md's walk, did not run: {planted}"]
    assert walk_mismatch(documented | {"harness.stray"}, documented) == [
        "ran, not in docs/architecture.md's walk: harness.stray"]


# -- `opkit test --help` stays light -----------------------------------------------------------
# numpy and the framework proper (registry, executor, ops) are what make an import slow
HEAVY = ("numpy", "ml_dtypes", "hypothesis", "paddle", "reference_ops", "opkit.layers",
         "opkit.framework.registry", "opkit.framework.operator", "opkit.framework.executor",
         "harness.checks", "harness.inputs")


def heavy_imports(code: str, heavy=HEAVY) -> list[str]:
    """The `heavy` modules (or their submodules) a fresh interpreter has after `code`."""
    import subprocess
    import sys

    probe = (f"import sys\n{code}\n"
             "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)")
    env = {k: v for k, v in __import__("os").environ.items() if k != "OPKIT_BACKEND"}
    got = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=120)
    loaded = got.stderr.splitlines()
    return sorted(m for m in loaded if any(m == h or m.startswith(h + ".") for h in heavy))


_HELP = ("from opkit.cli.main import main\ntry:\n    main(['test', '--help'])\n"
         "except SystemExit:\n    pass")


def test_opkit_test_help_imports_neither_numpy_nor_the_framework():
    assert heavy_imports(_HELP) == []


def test_opkit_test_help_reads_no_entry_points():
    """importlib.metadata (email, zipfile, ...) cost more than the rest of `opkit test --help`:
    the installed backends' names are read when --backend / --against is parsed."""
    assert heavy_imports(_HELP, ("importlib.metadata",)) == []
    assert entry_point_reads(_HELP) == []
    assert entry_point_reads("import harness.backend.dispatch\n"
                             "harness.backend.dispatch.names()") == ["opkit.backends"]


def entry_point_reads(code: str) -> list[str]:
    """The groups whose entry points `code` reads (opkit.plugins.entry_points_of, the one
    reader), in a fresh interpreter."""
    import subprocess
    import sys

    probe = ("import opkit.plugins as p\nseen = []\nread = p.entry_points_of\n"
             "p.entry_points_of = lambda g: seen.append(g) or read(g)\n"
             f"{code}\nprint(','.join(seen), file=sys.stderr)")
    got = subprocess.run([sys.executable, "-c", "import sys\n" + probe], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    lines = got.stderr.strip().splitlines() or [""]
    return [g for g in lines[-1].split(",") if g]


def test_the_help_probe_finds_a_planted_heavy_import():
    assert "numpy" in heavy_imports("import harness.options\nimport numpy")
    assert "opkit.framework.registry" in heavy_imports("import opkit.registry")
