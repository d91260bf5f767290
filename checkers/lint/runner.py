"""Lint many files: cache lookups, parallel workers for the misses, per-file ignores, fixes."""
from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from checkers.lint.config import LintConfig
from checkers.lint.files import collect, display, relative
from checkers.lint.findings import Finding

AUTO_PARALLEL_MIN_FILES = 40


@dataclass
class RunResult:
    findings: list = field(default_factory=list)
    files: int = 0
    fixed: list = field(default_factory=list)  # display paths of files rewritten (or to rewrite)
    diffs: list = field(default_factory=list)  # unified diffs, with --diff


def _work(item):
    """Worker entry point (top level so that it pickles)."""
    from checkers.lint.engine import lint_source

    path, data, config, fix = item
    return lint_source(path, data, config, fix=fix)


def _jobs(requested: int | None, misses: int) -> int:
    if requested is not None and requested > 0:
        return min(requested, max(1, misses))
    if misses < AUTO_PARALLEL_MIN_FILES:
        return 1
    return max(1, min(os.cpu_count() or 1, 8, misses // AUTO_PARALLEL_MIN_FILES))


def _run_all(items: list, jobs: int) -> list:
    if jobs <= 1 or len(items) <= 1:
        return [_work(item) for item in items]
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunksize = max(1, min(32, len(items) // (jobs * 4)))
    try:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(_work, items, chunksize=chunksize))
    except (BrokenProcessPool, OSError) as exc:
        print(f"opkit lint: parallel run failed ({exc}); continuing with one process", file=sys.stderr)
        return [_work(item) for item in items]


def lint_paths(paths: list[str], config: LintConfig, *, fix: bool = False, diff: bool = False,
               jobs: int | None = None) -> RunResult:
    files = collect(paths, config.root, config.exclude)
    result = RunResult(files=len(files))
    cache = None
    if config.cache and not (fix or diff):
        from checkers.lint.cache import LintCache

        cache = LintCache(config.root, config.fingerprint())

    found: dict[int, list] = {}
    todo: list = []
    keys: dict[int, str] = {}
    for i, path in enumerate(files):
        shown = display(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            found[i] = [Finding(shown, 1, 1, "OPK000", "syntax-error",
                                f"cannot read file: {exc.strerror or exc}")]
            continue
        if cache is not None:
            keys[i] = cache.key(path.name, data)
            hit = cache.get(keys[i])
            if hit is not None:
                found[i] = [Finding.from_dict({**entry, "path": shown}) for entry in hit]
                continue
        todo.append((i, path, shown, data))

    outcomes = _run_all([(shown, data, config, fix or diff) for _, _, shown, data in todo],
                        _jobs(jobs if jobs is not None else config.jobs, len(todo)))
    for (i, path, shown, _data), outcome in zip(todo, outcomes):
        findings = outcome.findings
        if cache is not None:
            cache.put(keys[i], [{k: v for k, v in f.to_dict().items() if k != "path"} for f in findings],
                      outcome.deps)
        if outcome.fixed is not None:
            findings = _apply_fix(path, shown, outcome, config, diff, result)
        found[i] = findings
    if cache is not None:
        cache.save()

    for i, path in enumerate(files):
        rel = relative(path, config.root)
        result.findings.extend(f for f in found.get(i, []) if config.enabled(f.rule, rel))
    return result


def _apply_fix(path: Path, shown: str, outcome, config: LintConfig, diff: bool, result: RunResult):
    from checkers.lint.engine import lint_source

    result.fixed.append(shown)
    if diff:
        result.diffs.append("".join(difflib.unified_diff(
            outcome.original.splitlines(keepends=True), outcome.fixed.splitlines(keepends=True),
            fromfile=f"a/{shown}", tofile=f"b/{shown}")))
    else:
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(outcome.fixed)
    return lint_source(shown, outcome.fixed.encode("utf-8"), config).findings
