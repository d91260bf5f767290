"""Find OpTest classes under test paths and the op each one tests.

`op_type` is set in `setUp`, so every candidate class is instantiated (as unittest does:
`cls("runTest")`) and its `setUp` run, with the global random generators seeded first. Test
paths come from `--tests` or `[tool.opkit] tests` in pyproject.toml (relative to that file).
"""
from __future__ import annotations

import importlib.util
import inspect
import random
import sys
import traceback
import unittest
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.backend.dispatch import compat_mode, compat_names
from harness.options import DEFAULT_SEED  # noqa: I001
from harness.spec import module_knob  # noqa: I001
from opkit.plugins import entry_point_packages
from opkit.project import load_project

__all__ = ["DiscoveredTest", "Discovery", "BrokenFile", "discover", "test_paths", "seed_all",
           "instantiate", "is_optest_class", "builtin_test_paths",
           "builtin_exemptions", "module_attribute_name", "pytest_target", "active_compat",
           "has_test_methods", "unittest_skip_reason", "declared_op_type"]


@dataclass
class DiscoveredTest:
    cls: type
    op_type: str | None
    path: str
    error: str | None = None        # setUp raised: the message
    skip: str | None = None         # unittest skips the class (skipIf / skip): the reason

    @property
    def name(self) -> str:
        return self.cls.__name__

    @property
    def source(self) -> str:
        return f"{self.path}::{self.cls.__name__}"


@dataclass
class BrokenFile:
    """A test file that cannot be imported: where and why."""
    path: str
    where: str          # "path:line" of the error (the file itself when unknown)
    message: str        # "SyntaxError: ..."

    @property
    def text(self) -> str:
        return f"{self.where}: cannot import the test file: {self.message}"


@dataclass
class Discovery:
    tests: list[DiscoveredTest] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)   # missing paths, skipped files
    broken: list[BrokenFile] = field(default_factory=list)   # test files that cannot import

    def by_op(self) -> dict[str, list[DiscoveredTest]]:
        out: dict[str, list[DiscoveredTest]] = {}
        for t in self.tests:
            if t.op_type and not t.skip:
                out.setdefault(t.op_type, []).append(t)
        return out


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))


def test_paths(explicit: list[str] | None = None) -> list[Path]:
    """--tests paths (relative to the working directory), else `[tool.opkit] tests`
    (relative to the pyproject.toml), else ./tests/ops when it exists."""
    if explicit:
        return [Path(p) for p in explicit]
    project = load_project()
    if project.tests:
        return project.test_paths()
    default = Path.cwd() / "tests" / "ops"
    return [default] if default.is_dir() else []


def _builtin_test_packages() -> list:
    """The `tests` subpackage of every installed op package (entry-point group `opkit.ops`),
    imported by name: the harness has no static import of any op package."""
    found = []
    for _name, value in entry_point_packages():
        try:
            found.append(importlib.import_module(value.split(":", 1)[0] + ".tests"))
        except ImportError:
            continue
    return found


def builtin_test_paths() -> list[Path]:
    """The folders of the installed op packages' OpTests (reference_ops/tests, installed
    with the ops)."""
    return [Path(t.__file__).resolve().parent for t in _builtin_test_packages()]


def builtin_exemptions() -> dict[str, str]:
    """{op: reason} for built-in ops without OpTest (`OPKIT_EXEMPT` next to their OpTests)."""
    out: dict[str, str] = {}
    for tests in _builtin_test_packages():
        out.update(module_knob(tests, "OPKIT_EXEMPT") or {})
    return out


def active_compat():
    """The compatibility mode on in this process (spec.COMPAT_PROTOCOL), or None."""
    for name in compat_names():
        mode = compat_mode(name)
        if mode is not None and mode.is_active():
            return mode
    return None


def _inherit_compat_modes() -> None:
    """A fresh interpreter started by a run in a compatibility mode (the cross-process
    determinism pair, harness.checks.runs.hashseed) gets the mode from its environment
    (options.compat_env) before it imports the framework's test files: without it their
    `from op_test import OpTest` fails there."""
    from harness.backend.dispatch import selected
    from harness.options import compat_env, flag

    for name in compat_names():
        mode = compat_mode(name)
        if flag(compat_env(name)) and mode is not None and not mode.is_active():
            mode.activate(selected())


def _test_files(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The test files under `paths`; in a compatibility mode not the framework's own
    harness beside its tests (Paddle's `op_test.py`, ...): the mode's shim stands in for it
    (as the pytest plugin's ignore hook does)."""
    files, problems = [], []
    mode = active_compat()
    for p in paths:
        if p.is_dir():
            found = sorted(f for f in p.rglob("*.py") if (f.name.startswith("test_") or
                                                          f.name.endswith("_test.py")))
            files.extend(f for f in found if "__pycache__" not in f.parts and not (
                mode is not None and mode.is_harness_file(f)))
        elif p.is_file():
            files.append(p)
        else:
            problems.append(f"--tests {p}: no such file or folder")
    unique: dict[Path, Path] = {}
    for f in files:
        unique.setdefault(f.resolve(), f)
    return list(unique.values()), problems


def _import_test_file(path: Path):
    resolved = path.resolve()
    name = "opkit_tests." + "_".join(resolved.with_suffix("").parts[-3:]).replace("-", "_")
    if name in sys.modules:
        return sys.modules[name]
    folder = str(resolved.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)        # sibling helpers, as pytest's rootdir insertion
    try:
        spec = importlib.util.spec_from_file_location(name, resolved)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)


def is_optest_class(obj) -> bool:
    if not inspect.isclass(obj) or not issubclass(obj, unittest.TestCase):
        return False
    mro_names = [c.__name__ for c in obj.__mro__]
    if "OpTest" not in mro_names or obj.__name__ == "OpTest":
        return False
    if obj.__module__.startswith("harness."):
        return False
    return getattr(obj, "__test__", True) is not False


def has_test_methods(cls) -> bool:
    """Whether a class has a test method (unittest and pytest run nothing else)."""
    return any(name.startswith("test") and callable(getattr(cls, name, None))
               for name in dir(cls))


def unittest_skip_reason(cls) -> str | None:
    """Why unittest skips the whole class (`@unittest.skip`, `skipIf`, `skipUnless` on it or
    a base class, or on every one of its test methods), or None: it runs."""
    if getattr(cls, "__unittest_skip__", False):
        return getattr(cls, "__unittest_skip_why__", "") or "skipped"
    methods = [getattr(cls, n) for n in dir(cls)
               if n.startswith("test") and callable(getattr(cls, n, None))]
    if methods and all(getattr(m, "__unittest_skip__", False) for m in methods):
        return getattr(methods[0], "__unittest_skip_why__", "") or "skipped"
    return None


def declared_op_type(cls) -> str | None:
    """The op type a class's setUp assigns as a literal (`self.op_type = "lerp"`), read from
    the source of its class hierarchy without running it (a skipped class's setUp is not run,
    as unittest does not run it)."""
    import ast
    import textwrap

    methods = [vars(k)["setUp"] for k in cls.__mro__ if "setUp" in vars(k)]
    methods += [f for k in cls.__mro__ for n, f in vars(k).items()   # helpers setUp calls
                if n != "setUp" and not n.startswith("test") and inspect.isfunction(f)]
    for method in methods:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
        except (OSError, TypeError, SyntaxError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
                    isinstance(node.value.value, str) and any(
                        isinstance(t, ast.Attribute) and t.attr == "op_type"
                        for t in node.targets):
                return node.value.value
    return None


def instantiate(cls, seed: int):
    """An OpTest instance with setUp run (global RNGs seeded first)."""
    test = cls("runTest")
    seed_all(seed)
    test.setUp()
    return test


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _error_location(exc: BaseException, path: Path) -> str:
    """'file:line' of the error inside the test file (or the file it raised in)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    where = f"{path}"
    names = (str(Path(path).resolve()), str(path))
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename in names:
            where = f"{path}:{line}"
    return where


def discover(paths: list[str | Path] | None = None, seed: int = DEFAULT_SEED) -> Discovery:
    """Import the test files under `paths` and set up every OpTest class found there."""
    result = Discovery()
    _inherit_compat_modes()
    files, result.problems = _test_files([Path(p) for p in (paths or [])] if paths
                                         else test_paths())
    for f in files:
        try:
            module = _import_test_file(f)
        except unittest.SkipTest as exc:
            result.problems.append(f"{f}: skipped ({exc})")
            continue
        except BaseException as exc:  # noqa: BLE001 - a broken test file is reported
            if isinstance(exc, KeyboardInterrupt):
                raise
            result.broken.append(BrokenFile(str(f), _error_location(exc, f), _one_line(exc)))
            continue
        for _, cls in sorted(vars(module).items()):
            if not is_optest_class(cls) or cls.__module__ != module.__name__:
                continue
            if active_compat() is not None and not has_test_methods(cls):
                continue      # unittest never instantiates a class without test methods
            skip = unittest_skip_reason(cls)
            if skip is not None:      # nor sets up a class it skips: reported as skipped
                result.tests.append(DiscoveredTest(cls, declared_op_type(cls), str(f),
                                                   skip=skip))
                continue
            test, error = None, None
            try:     # (not `instantiate`: a setUp that raises may have set op_type)
                test = cls("runTest")
                seed_all(seed)
                test.setUp()
            except unittest.SkipTest:
                continue
            except Exception as exc:  # noqa: BLE001 - reported on the op (or as a problem)
                error = f"setUp raised {type(exc).__name__}: {exc}"
            result.tests.append(DiscoveredTest(cls, getattr(test, "op_type", None), str(f), error))
    return result


def module_attribute_name(cls) -> str | None:
    """The name under which pytest collects `cls`: the module attribute holding it (a class
    made in a factory function has a `__qualname__` like `make.<locals>.Test`, which is no
    node id), or None when the module does not hold it."""
    module = sys.modules.get(getattr(cls, "__module__", ""), None)
    if getattr(module, cls.__name__, None) is cls:
        return cls.__name__
    held = vars(module) if module is not None else {}
    return next((name for name, value in held.items() if value is cls), None)


def pytest_target(cls, path: str, method: str | None = None) -> str:
    """What to pass to pytest to rerun `cls` (and `method`): a node id when the module holds
    the class, else the file with `-k`."""
    name = module_attribute_name(cls)
    if name:
        return f"{path}::{name}" + (f"::{method}" if method else "")
    return f"{path} -k \"{cls.__name__}" + (f" and {method}" if method else "") + "\""
