"""Precision of `opkit lint` on this folder: `bad/` files hold one violation each, marked
`# expect: OPKnnn` on its line; `good/` files are correct but look suspicious.

    python tests/lint_fixtures/precision/score.py   (run from the checkout to measure)

A bad file counts as found when the only finding is the expected rule on the marked line;
a good file is a false alarm when it has any finding."""
from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MARK = re.compile(r"#\s*expect:\s*(OPK\d{3})")


def expected(path: Path) -> list[tuple[int, str]]:
    return [(i, m.group(1)) for i, line in enumerate(path.read_text().splitlines(), 1)
            if (m := MARK.search(line))]


def findings(path: Path, full_path: bool = False) -> list[tuple[int, str]]:
    """The (line, rule) findings on `path`, linted under its name (or its whole path, for a
    set whose op files import helpers beside them)."""
    from checkers.lint.config import build_config
    from checkers.lint.engine import lint_source

    result = lint_source(str(path) if full_path else path.name, path.read_bytes(),
                         build_config({}, None, no_cache=True))
    return sorted((f.line, f.rule) for f in result.findings)


def files(folder: Path, kind: str, pattern: str = "*.py") -> list[Path]:
    """The `bad` or `good` files of a set."""
    return sorted((folder / kind).glob(pattern))


def score(folder: Path = HERE, pattern: str = "*.py", full_path: bool = False) -> dict:
    out = {"found": [], "missed": [], "quiet": [], "false_alarm": []}
    for path in files(folder, "bad", pattern):
        got = findings(path, full_path)
        out["found" if got == expected(path) else "missed"].append((path.name, got))
    for path in files(folder, "good", pattern):
        got = findings(path, full_path)
        out["false_alarm" if got else "quiet"].append((path.name, got))
    return out


def report(result: dict) -> None:
    bad = len(result["found"]) + len(result["missed"])
    good = len(result["quiet"]) + len(result["false_alarm"])
    print(f"found {len(result['found'])}/{bad} violations on the right line; "
          f"false alarms on {len(result['false_alarm'])}/{good} correct files")
    for name, got in result["missed"]:
        print(f"  missed: {name}: {got}")
    for name, got in result["false_alarm"]:
        print(f"  false alarm: {name}: {got}")


if __name__ == "__main__":
    report(score())
    sys.exit(0)
