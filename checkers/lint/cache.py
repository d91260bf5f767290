"""Findings of unchanged files, keyed by content hash, the linter's own code and configuration.

One JSON file per (opkit version, hash of the `checkers/lint` sources, configuration
fingerprint) under `<project root>/.opkit_cache/lint/`: an edited rule never serves results
computed by its previous version. Each file maps
sha256(file name + content) to the findings (without the path, which is added back
on load). Written atomically; a damaged cache is ignored.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

MAX_ENTRIES = 50_000


LINT_PACKAGE = Path(__file__).resolve().parent
_CODE_DIGEST: str | None = None


def code_digest(root: Path | None = None) -> str:
    """sha256 over the linter's own sources (every .py under checkers/lint, by relative path
    and content): rules, dataflow, engine. About 30 small files: well under a millisecond
    next to reading the project's files."""
    global _CODE_DIGEST
    if root is None and _CODE_DIGEST is not None:
        return _CODE_DIGEST
    base = root or LINT_PACKAGE
    digest = hashlib.sha256()
    for path in sorted(base.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(base).as_posix().encode())
        digest.update(b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<unreadable>")
        digest.update(b"\0")
    value = digest.hexdigest()[:16]
    if root is None:
        _CODE_DIGEST = value
    return value


def _version() -> str:
    try:
        from opkit.version import __version__
    except Exception:  # noqa: BLE001
        return "unknown"
    return __version__


class LintCache:
    def __init__(self, root: Path, fingerprint: str) -> None:
        self.folder = root / ".opkit_cache" / "lint"
        self.path = self.folder / f"{_version()}-{code_digest()}-{fingerprint}.json"
        self.entries: dict[str, list] = {}
        self.dirty = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                self.entries = data
        except (OSError, ValueError):
            pass

    @staticmethod
    def key(name: str, data: bytes) -> str:
        digest = hashlib.sha256(name.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def get(self, key: str):
        """The findings stored for `key`; None when absent or when a file the analysis read
        (a helper imported from another module of the project) has changed since."""
        entry = self.entries.get(key)
        if isinstance(entry, dict):
            for dep, digest in entry.get("deps", {}).items():
                try:
                    now = hashlib.sha256(Path(dep).read_bytes()).hexdigest()
                except OSError:
                    now = ""
                if now != digest:
                    return None
            return entry.get("findings")
        return entry

    def put(self, key: str, findings: list[dict], deps: dict | None = None) -> None:
        self.entries[key] = {"findings": findings, "deps": deps} if deps else findings
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            gitignore = self.folder.parent / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("*\n", encoding="utf-8")
            entries = self.entries
            if len(entries) > MAX_ENTRIES:
                entries = dict(list(entries.items())[-MAX_ENTRIES:])
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entries, handle, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only checkout still lints, just without a cache
