"""Which files to lint: the paths given (files and folders), minus the excludes."""
from __future__ import annotations

import os
from fnmatch import fnmatch
from pathlib import Path

from checkers.lint.config import DEFAULT_EXCLUDES
from checkers.lint.cpp import SUFFIXES as CPP_SUFFIXES

SOURCE_SUFFIXES = (".py", ".pyi", *CPP_SUFFIXES)


class PathProblem(Exception):
    """A path on the command line that does not exist."""


def relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def display(path: Path) -> str:
    """The path as shown in findings: relative to the current folder when under it."""
    try:
        return path.absolute().relative_to(Path.cwd().absolute()).as_posix()
    except ValueError:
        return path.as_posix()


def _excluded(rel: str, name: str, patterns: tuple) -> bool:
    if any(fnmatch(name, p) for p in DEFAULT_EXCLUDES):
        return True
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch(rel, pattern) or fnmatch(name, pattern) or rel.startswith(pattern + "/"):
            return True
    return False


def _under_excluded(path: Path, root: Path, patterns: tuple) -> bool:
    rel = relative(path, root)
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        if _excluded("/".join(parts[:i]), parts[i - 1], patterns if i else ()):
            return True
    return False


def collect(paths: list[str], root: Path, exclude: tuple) -> list[Path]:
    """Python and C++ files under `paths` (default: the current folder), sorted, without duplicates.

    Excludes apply to files named on the command line too, so that pre-commit, which
    passes every changed file, respects them.
    """
    out: list[Path] = []
    seen: set[Path] = set()
    for given in paths or ["."]:
        path = Path(given)
        if not path.exists():
            raise PathProblem(f"{given}: no such file or directory")
        if path.is_file():
            candidates = [] if _under_excluded(path, root, exclude) else [path]
        else:
            candidates = []
            start = path
            if path.resolve() != root.resolve() and _under_excluded(path, root, exclude):
                continue
            for folder, dirs, files in os.walk(start):
                base = Path(folder)
                dirs[:] = sorted(d for d in dirs
                                 if not _excluded(relative(base / d, root), d, exclude))
                for name in sorted(files):
                    if name.lower().endswith(SOURCE_SUFFIXES) and \
                            not _excluded(relative(base / name, root), name, exclude):
                        candidates.append(base / name)
        for candidate in candidates:
            key = candidate.resolve()
            if key not in seen:
                seen.add(key)
                out.append(candidate)
    return out
