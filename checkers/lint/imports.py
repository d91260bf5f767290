"""Helpers imported from other modules of the same project: the file is found next to the
linted file (or above it, for absolute imports), parsed with libcst and indexed, never
imported or run. Every file read is recorded (`used_files`) so that the cache can tell when
a result depends on another file's content."""
from __future__ import annotations

from pathlib import Path

MAX_PARENTS = 8
_MODULES: dict[Path, tuple] = {}  # file -> ((mtime_ns, size), ModuleIndex or None)
_USED: set[str] = set()


def reset_used() -> None:
    _USED.clear()


def used_files() -> list[str]:
    return sorted(_USED)


def _candidates(base: Path, parts: list[str]):
    yield base.joinpath(*parts).with_suffix(".py") if parts else base / "__init__.py"
    yield base.joinpath(*parts, "__init__.py")


def find_module(importer: str, dotted: str, level: int = 0) -> Path | None:
    """The file of module `dotted` as imported from the file `importer` (which must be a
    file on disk: source given on standard input or in memory imports nothing)."""
    if not Path(importer).is_file():
        return None
    here = Path(importer).resolve().parent
    parts = [p for p in dotted.split(".") if p]
    if level > 0:
        bases = [here.parents[level - 2] if level > 1 else here] if level - 1 <= len(here.parents) else []
    else:
        bases = [here, *list(here.parents)[:MAX_PARENTS]]
    for base in bases:
        for candidate in _candidates(base, parts):
            if candidate.is_file():
                return candidate
    return None


def module_index(file: Path):
    """The ModuleIndex of another file of the project (cached while it is unchanged)."""
    try:
        stat = file.stat()
    except OSError:
        return None
    stamp = (stat.st_mtime_ns, stat.st_size)
    _USED.add(str(file))
    cached = _MODULES.get(file)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    import libcst as cst

    from checkers.lint.index import ModuleIndex

    try:
        module = cst.parse_module(file.read_text(encoding="utf-8"))
        index = ModuleIndex(module)
    except Exception:  # noqa: BLE001 - an unreadable helper module is simply not followed
        index = None
    _MODULES[file] = (stamp, index)
    return index


def resolve_function(importer: str, origin: str, level: int = 0):
    """(FunctionDef, its ModuleIndex, shown path) for `origin` = "pkg.mod.func", or None."""
    if "." not in origin:
        return None
    module, name = origin.rsplit(".", 1)
    file = find_module(importer, module, level)
    if file is None:
        return None
    index = module_index(file)
    if index is None or name not in index.functions:
        return None
    try:
        shown = str(file.relative_to(Path(importer).resolve().parent))
    except ValueError:
        shown = file.name
    return index.functions[name], index, shown
