"""Op packages as plugins: how the built-in ops and a user's ops get registered.

An op package is a Python module (or package) whose import registers ops and kernels with
`opkit.register_operator` / `opkit.register_kernel`. Installed op packages announce
themselves in the entry-point group `opkit.ops`, the built-in `reference_ops` first:

    [project.entry-points."opkit.ops"]
    my_ops = "my_ops"

The registry loads the installed packages on its first lookup (`load_entry_point_ops`);
commands and the pytest plugin load the extra ones a project names (`[tool.opkit] ops`, the
`--ops` option) with `load_op_packages`. Both end with the same check: a kernel registered for
an op type that no package registers is an error naming the file and line of the kernel.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["ENTRY_POINT_GROUP", "DISTRIBUTION", "OpPackageError", "entry_point_packages",
           "entry_points_of", "load_entry_point", "load_entry_point_ops", "load_op_type", "load_op_packages", "check_orphan_kernels"]

ENTRY_POINT_GROUP = "opkit.ops"
# opkit's own distribution: its op packages (the built-in ops) come first. When no installed
# distribution declares the group (a source tree run without installing it), the group is
# read from the pyproject.toml beside the opkit package: opkit names no op package itself.
DISTRIBUTION = "opkit-dl"

_LOADED: list[str] = []


class OpPackageError(Exception):
    """An op package could not be loaded; the message names the package (module, file or
    folder) and, where known, the file and line at fault."""

    def __init__(self, message: str, spec: str = ""):
        super().__init__(message)
        self.spec = spec


def _dist_name(folder: str) -> str:
    """'opkit_dl' of 'opkit_dl-0.1.0.dist-info' or 'opkit_dl.egg-info' (normalized)."""
    stem = folder.rsplit(".", 1)[0] if folder.endswith(".dist-info") else folder[:-9]
    return stem.split("-")[0].replace(".", "_").lower()


def _entry_points(group: str, own: set | None = None) -> set[tuple[str, str]]:
    """(name, value) of the entry points of `group` in the distributions on sys.path; those
    of opkit's own distribution are also added to `own`.

    What `importlib.metadata.entry_points(group=...)` answers, read straight from the
    `entry_points.txt` files: importing importlib.metadata costs more than the whole first
    registry lookup otherwise does."""
    found = set()
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(folder or ".", name, "entry_points.txt"),
                          encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                continue
            section = None
            for line in text.splitlines():
                line = line.strip()
                if not line or line.startswith(("#", ";")):
                    continue
                if line.startswith("[") and line.endswith("]"):
                    section = line[1:-1].strip()
                elif section == group and "=" in line:
                    key, value = line.split("=", 1)
                    found.add((key.strip(), value.strip()))
                    if own is not None and _dist_name(name) == \
                            DISTRIBUTION.replace("-", "_"):
                        own.add((key.strip(), value.strip()))
    return found


def _source_tree_entry_points(group: str) -> set[tuple[str, str]]:
    """The group as opkit's own pyproject.toml declares it, when opkit runs from a source
    tree that was not installed."""
    path = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ValueError, ImportError):
        return set()
    table = data.get("project", {}).get("entry-points", {}).get(group, {})
    return {(str(k), str(v)) for k, v in table.items()} if isinstance(table, dict) else set()


def entry_points_of(group: str) -> list[tuple[str, str]]:
    """(name, value) of every entry point of `group` (`opkit.backends`, `opkit.checks`, ...),
    sorted by name. opkit's own distribution's come from the pyproject.toml beside the
    imported opkit package when there is one (a source tree: its metadata may be another
    checkout's), else from its installed metadata."""
    own: set = set()
    found = _entry_points(group, own)
    tree = Path(__file__).resolve().parents[1] / "pyproject.toml"
    if tree.is_file():
        found = (found - own) | _source_tree_entry_points(group)
    return sorted(found)


def load_entry_point(value: str):
    """The object an entry point's value ("module:attr" or "module") names."""
    module, _, attr = value.partition(":")
    found = importlib.import_module(module.strip())
    for part in attr.strip().split(".") if attr.strip() else ():
        found = getattr(found, part)
    return found


def entry_point_packages() -> list[tuple[str, str]]:
    """(entry-point name, module) of every installed op package, opkit's own (the built-in
    ops) first."""
    own: set = set()
    found = sorted(_entry_points(ENTRY_POINT_GROUP, own))
    if not found:
        own = _source_tree_entry_points(ENTRY_POINT_GROUP)
        found = sorted(own)
    found.sort(key=lambda item: (item not in own, item[0]))
    return found


def load_entry_point_ops() -> list[str]:
    """Import every installed op package once (all of its ops, for a package that loads
    them on demand); returns the module names loaded."""
    loaded = []
    for name, value in entry_point_packages():
        module = value.split(":", 1)[0]
        if module not in _LOADED:
            package = _import_module(module, f"entry point {ENTRY_POINT_GROUP}:{name}")
            load_all = getattr(package, "load_all_ops", None)
            if callable(load_all):
                _call(load_all, module, f"entry point {ENTRY_POINT_GROUP}:{name}")
            _LOADED.append(module)
        loaded.append(module)
    check_orphan_kernels()
    return loaded


def load_op_type(op_type: str) -> None:
    """The registry's lookup of `op_type` before every package is loaded: a package that
    loads its ops on demand (it has `load_op(op_type)` and `load_all_ops()`, as
    `reference_ops`) imports the module of that op only; any other installed package is
    imported whole, as `load_entry_point_ops` would. The registry falls back to loading
    everything when the op is still unknown afterwards."""
    for name, value in _packages():
        module = value.split(":", 1)[0]
        if module in _LOADED:
            continue
        spec = f"entry point {ENTRY_POINT_GROUP}:{name}"
        package = _import_module(module, spec)
        load_op = getattr(package, "load_op", None)
        if callable(load_op) and callable(getattr(package, "load_all_ops", None)):
            _call(load_op, module, spec, op_type)
        else:
            _LOADED.append(module)


_PACKAGES: list = []


def _packages() -> list[tuple[str, str]]:
    """entry_point_packages(), read once per process."""
    if not _PACKAGES:
        _PACKAGES.extend(entry_point_packages())
    return _PACKAGES


def _call(fn, module: str, spec: str, *args) -> None:
    try:
        fn(*args)
    except OpPackageError:
        raise
    except Exception as exc:
        raise OpPackageError(f"{spec}: loading the op module failed: {_describe(exc)}"
                             f"{_where(exc, None)}", spec) from None


def load_op_packages(specs=(), base: str | Path | None = None,
                     entry_points: bool = True) -> list[str]:
    """Load op packages: the installed ones (entry points) unless `entry_points` is False,
    then each of `specs` (a module name, a `.py` file, or a folder of `*_op.py` files; a
    relative path or a module name is looked up from `base`, default the current folder).

    Returns what was loaded (module names and file paths). Raises OpPackageError naming the
    spec (and the file and line) when one cannot be found or fails to load, or when a kernel
    is registered for an op type that is never registered."""
    from opkit.framework import registry

    loaded = []
    if entry_points:
        registry.all_op_types()  # the registry's first lookup loads the installed packages
        loaded = list(_LOADED)
    base = Path(base) if base is not None else Path.cwd()
    for spec in specs:
        spec = str(spec)
        path = Path(spec)
        if not path.is_absolute():
            path = base / path
        if path.is_dir():
            files = sorted(path.glob("*_op.py")) or sorted(path.glob("*.py"))
            for f in files:
                _import_file(f, spec)
                loaded.append(str(f))
        elif path.suffix == ".py":
            if not path.is_file():
                raise OpPackageError(f"{spec}: no such file", spec)
            _import_file(path, spec)
            loaded.append(str(path))
        else:
            if str(base) not in sys.path and str(base.resolve()) not in sys.path:
                sys.path.append(str(base))
            _import_module(spec, spec)
            loaded.append(spec)
    check_orphan_kernels()
    return loaded


def check_orphan_kernels() -> None:
    """OpPackageError naming file and line when a kernel's op type is never registered."""
    from opkit.framework import registry

    orphans = registry.orphan_kernels()
    if not orphans:
        return
    seen, lines = set(), []
    for entry in orphans:
        if (entry.op_type, entry.where) in seen:
            continue
        seen.add((entry.op_type, entry.where))
        lines.append(f"{entry.where or entry.name}: a kernel is registered for op "
                     f"'{entry.op_type}', but no op package registers that op type "
                     f"(register_operator('{entry.op_type}', ...) missing or misspelt?)")
    raise OpPackageError("\n".join(lines), orphans[0].op_type)


def _import_module(module: str, spec: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            raise OpPackageError(f"{spec}: cannot import module ({exc})", spec) from None
        raise OpPackageError(f"{spec}: loading the op module failed: {_describe(exc)}"
                             f"{_where(exc, None)}", spec) from None
    except Exception as exc:
        raise OpPackageError(f"{spec}: loading the op module failed: {_describe(exc)}"
                             f"{_where(exc, None)}", spec) from None


def exec_op_file(path: Path) -> None:
    """Import the op file `path` once, under a module name derived from its path; an error
    propagates (the module is forgotten, so a fixed file can be loaded again)."""
    name = "opkit_user_ops." + "_".join(path.resolve().with_suffix("").parts[-3:]).replace(
        "-", "_")
    if name in sys.modules:
        return
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"{path} is not a Python file (.py)")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def _import_file(path: Path, spec: str) -> None:
    try:
        exec_op_file(path)
    except Exception as exc:
        raise OpPackageError(f"{path}{_where(exc, str(path))}: loading the op module failed: "
                             f"{_describe(exc)}", spec) from None


def _where(exc: Exception, filename: str | None) -> str:
    """':<line>' of the last traceback frame in `filename` (or ' (<file>:<line>)' of the
    innermost frame when no file is given)."""
    tb, hit = exc.__traceback__, None
    while tb is not None:
        if filename is None or tb.tb_frame.f_code.co_filename == filename:
            hit = tb
        tb = tb.tb_next
    if hit is None:
        return ""
    if filename is not None:
        return f":{hit.tb_lineno}"
    return f" ({hit.tb_frame.f_code.co_filename}:{hit.tb_lineno})"


def _describe(exc: Exception) -> str:
    text = str(exc)
    kind = type(exc).__name__
    return text if text.startswith(kind) or f"] {kind}:" in text else f"{kind}: {text}"
