"""`[tool.opkit]` from the nearest pyproject.toml, and the shared --ops/--format options."""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


def find_pyproject(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(section: str = "", start: Path | None = None) -> tuple[dict, Path | None]:
    """The `[tool.opkit]` table (or `[tool.opkit.<section>]`) and the file it came from."""
    path = find_pyproject(start)
    if path is None:
        return {}, None
    from opkit.cli.main import UsageError

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read [tool.opkit]: {exc}") from None
    table = data.get("tool", {}).get("opkit", {})
    if section:
        table = table.get(section, {})
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.opkit{'.' + section if section else ''}] must be a table")
    return table, path


def add_format_option(parser, choices=("text", "json")) -> None:
    parser.add_argument("--format", choices=choices, default="text", help="output format")


def add_ops_option(parser) -> None:
    parser.add_argument("--ops", action="append", default=[], metavar="MODULE_OR_PATH",
                        help="extra op modules or folders to load (repeatable)")


def load_op_modules(extra: list[str]) -> list[str]:
    """Import the built-in ops, `[tool.opkit] ops` and `--ops` modules/files/folders.

    Returns the names of what was loaded. A module that cannot be found is a usage error.
    """
    from opkit.cli.main import UsageError

    import reference_ops  # noqa: F401  (registers the built-in ops)

    table, pyproject = load_config()
    entries = [(e, pyproject.parent if pyproject else Path.cwd()) for e in table.get("ops", [])]
    entries += [(e, Path.cwd()) for e in extra]
    loaded = []
    for entry, base in entries:
        path = Path(entry)
        if not path.is_absolute():
            path = base / path
        if path.is_dir():
            files = sorted(path.glob("*_op.py")) or sorted(path.glob("*.py"))
            for f in files:
                _import_file(f)
                loaded.append(str(f))
        elif path.suffix == ".py":
            if not path.is_file():
                raise UsageError(f"--ops {entry}: no such file")
            _import_file(path)
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
                raise UsageError(f"--ops {entry}: cannot import module ({exc})") from None
            except Exception as exc:
                raise UsageError(f"--ops {entry}: loading the op module failed: "
                                 f"{_describe(exc)}") from None
            loaded.append(entry)
    return loaded


def _import_file(path: Path) -> None:
    name = "opkit_user_ops." + "_".join(path.resolve().with_suffix("").parts[-3:]).replace("-", "_")
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        from opkit.cli.main import UsageError

        where = ""
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == str(path):
                where = f":{tb.tb_lineno}"
            tb = tb.tb_next
        raise UsageError(f"--ops {path}{where}: loading the op module failed: "
                         f"{_describe(exc)}") from None


def _describe(exc: Exception) -> str:
    """One line for an error: opkit's errors already start with their kind."""
    text = str(exc)
    kind = type(exc).__name__
    return text if text.startswith(kind) or f"] {kind}:" in text else f"{kind}: {text}"
