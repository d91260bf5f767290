"""`[tool.opkit.lint]`: validated lint settings, merged with command-line flags."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from checkers.lint.catalog import RULES, expand

DEFAULT_EXCLUDES = (".git", ".venv", "venv", ".ci-venv", "build", "dist", "__pycache__",
                    "*.egg-info", "node_modules", ".tox", ".nox", ".opkit_cache", ".hypothesis",
                    ".pytest_cache", ".mypy_cache")

KNOWN_KEYS = {"exclude", "extend-exclude", "select", "ignore", "per-file-ignores",
              "min-message-length", "require-error-type", "jobs", "cache", "notes",
              "low-precision-pairs"}
# rules that report nothing unless asked for: `notes = true`, or named in `select`/`--select`
OFF_BY_DEFAULT = frozenset({"OPK009"})


class ConfigError(ValueError):
    """A bad setting; the message names the file and the key."""


@dataclass
class LintConfig:
    select: frozenset = field(default_factory=lambda: frozenset(RULES) - OFF_BY_DEFAULT)
    exclude: tuple = ()
    per_file_ignores: dict = field(default_factory=dict)  # glob -> frozenset of codes
    min_message_length: int = 0
    require_error_type: bool = False
    low_precision_pairs: bool = False   # OPK003 also: float16 and bfloat16 kernels in pairs
    jobs: int | None = None
    cache: bool = True
    root: Path = field(default_factory=Path.cwd)

    def fingerprint(self) -> str:
        """What changes analysis results (per-file ignores are applied after the cache)."""
        data = {"select": sorted(self.select), "min": self.min_message_length,
                "typed": self.require_error_type}
        if self.low_precision_pairs:
            data["pairs"] = True
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def enabled(self, code: str, rel_path: str) -> bool:
        if code not in self.select:
            return False
        from fnmatch import fnmatch

        for pattern, codes in self.per_file_ignores.items():
            if code in codes and (fnmatch(rel_path, pattern) or fnmatch(Path(rel_path).name, pattern)):
                return False
        return True


def _codes(values, where: str) -> set[str]:
    out: set[str] = set()
    for value in values:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected rule codes (strings), got {value!r}")
        matched = expand(value)
        if not matched:
            raise ConfigError(f"{where}: unknown rule code {value!r} (known: {', '.join(RULES)})")
        out.update(matched)
    return out


def _str_list(table: dict, key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: key {key!r} must be a list of strings")
    return value


def build_config(table: dict, source: Path | None, *, select: list[str] | None = None,
                 ignore: list[str] | None = None, jobs: int | None = None,
                 no_cache: bool = False) -> LintConfig:
    """Validate the `[tool.opkit.lint]` table and merge the command-line flags over it."""
    where = f"{source} [tool.opkit.lint]" if source else "[tool.opkit.lint]"
    for key in table:
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
    config = LintConfig(root=source.parent if source else Path.cwd())
    config.exclude = tuple(_str_list(table, "exclude", where) + _str_list(table, "extend-exclude", where))

    chosen = set(RULES)
    if "select" in table:
        chosen = _codes(_str_list(table, "select", where), f"{where} key 'select'") | {"OPK000"}
    chosen -= _codes(_str_list(table, "ignore", where), f"{where} key 'ignore'")
    if select:
        chosen = _codes(select, "--select") | {"OPK000"}
    if ignore:
        chosen -= _codes(ignore, "--ignore")
    notes = table.get("notes", False)
    if not isinstance(notes, bool):
        raise ConfigError(f"{where}: key 'notes' must be true or false, got {notes!r}")
    named = set(select or (_str_list(table, "select", where) if "select" in table else []))
    for code in OFF_BY_DEFAULT:
        if not notes and code not in named and RULES[code][0] not in named:
            chosen.discard(code)
    config.select = frozenset(chosen)

    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{where}: key 'per-file-ignores' must be a table of glob = [codes]")
    for pattern, codes in pfi.items():
        if isinstance(codes, str):
            codes = [codes]
        if not isinstance(codes, list):
            raise ConfigError(f"{where}: key 'per-file-ignores' entry {pattern!r} must be a list of codes")
        config.per_file_ignores[pattern] = frozenset(
            _codes(codes, f"{where} key 'per-file-ignores' entry {pattern!r}"))

    mml = table.get("min-message-length", 0)
    if isinstance(mml, bool) or not isinstance(mml, int) or mml < 0:
        raise ConfigError(f"{where}: key 'min-message-length' must be a non-negative integer, got {mml!r}")
    config.min_message_length = mml
    ret = table.get("require-error-type", False)
    if not isinstance(ret, bool):
        raise ConfigError(f"{where}: key 'require-error-type' must be true or false, got {ret!r}")
    config.require_error_type = ret
    pairs = table.get("low-precision-pairs", False)
    if not isinstance(pairs, bool):
        raise ConfigError(f"{where}: key 'low-precision-pairs' must be true or false, got "
                          f"{pairs!r}")
    config.low_precision_pairs = pairs

    tjobs = table.get("jobs")
    if tjobs is not None and (isinstance(tjobs, bool) or not isinstance(tjobs, int) or tjobs < 0):
        raise ConfigError(f"{where}: key 'jobs' must be a non-negative integer, got {tjobs!r}")
    config.jobs = jobs if jobs is not None else tjobs
    tcache = table.get("cache", True)
    if not isinstance(tcache, bool):
        raise ConfigError(f"{where}: key 'cache' must be true or false, got {tcache!r}")
    config.cache = tcache and not no_cache
    return config
