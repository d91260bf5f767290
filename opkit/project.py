"""A project's opkit settings: the `[tool.opkit]` table of the nearest pyproject.toml.

One loader for the command line, the harness and the pytest plugin. The table is validated:
an unknown key or a value of the wrong type is a `ProjectError` naming the pyproject.toml
and the key (the command line prints it as a usage error, exit 2).

    [tool.opkit]
    ops = ["my_ops"]                  # op modules, .py files or folders to load
    tests = ["tests/ops"]             # where the OpTest classes live
    builtin-tests = false             # `opkit test --all` also tests the built-in ops
    durations = ".opkit_durations.json"   # recorded test durations (balanced --shard)
    [tool.opkit.exempt]               # ops that need no OpTest, with the reason
    while = "control flow: tested through the programs in tests/framework"
    [tool.opkit.lint]                 # `opkit lint` settings (see docs/lint.md)

Sub-tables other tools own (`lint`, `compat`, `paddle`) are handed over unchecked.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["ProjectError", "Project", "find_pyproject", "load_project", "load_section",
           "load_op_modules", "KEYS", "SECTIONS"]

# key -> (kind, description); kind: "paths" (list of strings), "bool", "str", "reasons"
KEYS = {
    "ops": ("paths", "op modules, .py files or folders to load"),
    "tests": ("paths", "test files or folders holding OpTest classes"),
    "builtin-tests": ("bool", "`opkit test --all` also tests the built-in ops"),
    "durations": ("str", "file of recorded test durations, for a balanced --shard"),
    "exempt": ("reasons", "ops that need no OpTest: {op = reason}"),
}
SECTIONS = ("lint", "compat", "paddle")   # sub-tables owned by other commands


class ProjectError(ValueError):
    """Bad `[tool.opkit]` configuration or an op module that cannot be loaded."""


@dataclass
class Project:
    path: Path | None = None            # the pyproject.toml, or None
    ops: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    builtin_tests: bool = False
    durations: str | None = None
    exempt: dict[str, str] = field(default_factory=dict)
    sections: dict[str, dict] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        """The folder relative paths of the table are resolved against."""
        return self.path.parent if self.path else Path.cwd()

    def resolve(self, entry: str) -> Path:
        p = Path(entry)
        return p if p.is_absolute() else self.root / p

    def test_paths(self) -> list[Path]:
        return [self.resolve(e) for e in self.tests]

    def durations_path(self) -> Path:
        return self.resolve(self.durations or ".opkit_durations.json")


def find_pyproject(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _read(path: Path) -> dict:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProjectError(f"{path}: cannot read [tool.opkit]: {exc}") from None
    tool = data.get("tool", {})
    table = tool.get("opkit", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ProjectError(f"{path}: [tool.opkit] must be a table, not "
                           f"{type(table).__name__}")
    return table


def _type_name(value) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


def load_project(start: Path | None = None) -> Project:
    """The validated `[tool.opkit]` of the nearest pyproject.toml (defaults without one)."""
    path = find_pyproject(start)
    if path is None:
        return Project()
    table = _read(path)
    project = Project(path=path)
    for key, value in table.items():
        where = f"{path}: [tool.opkit] {key}"
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise ProjectError(f"{path}: [tool.opkit.{key}] must be a table, not "
                                   f"{_type_name(value)}")
            project.sections[key] = value
            continue
        if key not in KEYS:
            known = ", ".join(sorted([*KEYS, *SECTIONS]))
            raise ProjectError(f"{where}: unknown key (known: {known})")
        kind = KEYS[key][0]
        if kind == "paths":
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ProjectError(f"{where} must be a list of strings, e.g. {key} = "
                                   f"[\"{'my_ops' if key == 'ops' else 'tests/ops'}\"] "
                                   f"(got {value!r})")
            setattr(project, key, list(value))
        elif kind == "bool":
            if not isinstance(value, bool):
                raise ProjectError(f"{where} must be true or false (got {value!r})")
            project.builtin_tests = value
        elif kind == "str":
            if not isinstance(value, str) or not value:
                raise ProjectError(f"{where} must be a file name (got {value!r})")
            project.durations = value
        elif kind == "reasons":
            if not isinstance(value, dict):
                raise ProjectError(f"{where} must be a table of op = \"reason\" "
                                   f"(got {_type_name(value)})")
            for op, reason in value.items():
                if not isinstance(reason, str) or not reason.strip():
                    raise ProjectError(f"{where}.{op}: the reason must be a non-empty "
                                       f"string (got {reason!r})")
            project.exempt = dict(value)
    return project


def load_section(section: str, start: Path | None = None) -> tuple[dict, Path | None]:
    """`[tool.opkit.<section>]` (unchecked: its command validates it) and its file."""
    project = load_project(start)
    return project.sections.get(section, {}), project.path


# -- op modules ---------------------------------------------------------------------------
def load_builtin_ops() -> None:
    """The installed op packages (entry-point group `opkit.ops`, `reference_ops` first)."""
    from opkit.plugins import load_entry_point_ops

    load_entry_point_ops()


def load_op_modules(extra: list[str] | None = None, project: Project | None = None,
                    builtins: bool = True) -> list[str]:
    """Import the built-in ops, the project's `ops` and `extra` (`--ops`) entries.

    An entry is a module name, a .py file or a folder (its `*_op.py` files, else its .py
    files). Returns what was loaded. Raises ProjectError naming the entry (and where it
    came from) when one cannot be found or fails to load."""
    if builtins:
        load_builtin_ops()
    project = project if project is not None else load_project()
    entries = [(e, project.root, f"{project.path}: [tool.opkit] ops entry {e!r}")
               for e in project.ops]
    entries += [(e, Path.cwd(), f"--ops {e}") for e in (extra or [])]
    loaded = []
    for entry, base, label in entries:
        path = Path(entry)
        if not path.is_absolute():
            path = base / path
        looks_like_path = ("/" in entry or "\\" in entry or entry.endswith(".py")
                           or entry.startswith("."))
        if path.is_dir():
            files = sorted(path.glob("*_op.py")) or sorted(path.glob("*.py"))
            files = [f for f in files if f.name != "__init__.py"] or files
            if not files:
                raise ProjectError(f"{label}: folder holds no Python files")
            for f in files:
                _import_file(f, label)
                loaded.append(str(f))
        elif path.suffix == ".py" or looks_like_path:
            if not path.is_file():
                raise ProjectError(f"{label}: no such file or folder")
            if path.suffix != ".py":
                raise ProjectError(f"{label}: {path} is not a Python file: name a .py "
                                   f"file, a folder of *_op.py files or a module")
            _import_file(path, label)
            loaded.append(str(path))
        else:
            # a module name is found from the project folder (pyproject's, or the current
            # one for --ops) also when `opkit` runs as a console script, whose sys.path
            # does not hold the current folder (`python -m opkit` does)
            if str(base) not in sys.path and str(base.resolve()) not in sys.path:
                sys.path.append(str(base))
            try:
                importlib.import_module(entry)
            except ModuleNotFoundError as exc:
                raise ProjectError(f"{label}: cannot import module ({exc})") from None
            except Exception as exc:  # noqa: BLE001 - reported as a usage error
                raise ProjectError(f"{label}: loading the op module failed"
                                   f"{_where(exc, None)}: {describe(exc)}") from None
            loaded.append(entry)
    if entries:
        # a kernel for an op type nobody registers (a typo in register_kernel) is an
        # error of the entry that registered it, not a traceback at the first lookup
        # (has_op loads an installed op on demand: a kernel for a built-in op is no orphan)
        from opkit.plugins import OpPackageError, check_orphan_kernels
        from opkit.registry import has_op, orphan_kernels

        if any(not has_op(e.op_type) for e in orphan_kernels()):
            try:
                check_orphan_kernels()
            except OpPackageError as exc:
                raise ProjectError(str(exc)) from None
    return loaded


def _where(exc: BaseException, path: Path | None) -> str:
    """' (file:line)' of the innermost frame in `path` (or in any file when None)."""
    found = ""
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if path is None or name == str(path):
            found = f"{name}:{tb.tb_lineno}"
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) and exc.filename:
        found = f"{exc.filename}:{exc.lineno}"
    return f" ({found})" if found else ""


def _import_file(path: Path, label: str) -> None:
    from opkit.plugins import exec_op_file

    try:
        exec_op_file(path)
    except Exception as exc:  # noqa: BLE001 - reported as a usage error
        where = _where(exc, path) or _where(exc, None)  # the line in the user's file first
        raise ProjectError(f"{label}: loading {path} failed{where}: "
                           f"{describe(exc)}") from None


def describe(exc: BaseException) -> str:
    """One line for an error: opkit's errors already start with their kind."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    kind = type(exc).__name__
    return text if text.startswith(kind) or f"] {kind}:" in text else f"{kind}: {text}"
