"""The blind set of `opkit lint`: op files written BEFORE the rules were extended for them
(issue 26), in forms the earlier rules did not follow. `bad/` files hold one violation each,
marked `# expect: OPKnnn` on its line; `good/` files are correct but look suspicious.
`*/oplib/` is a small package of helpers that some op files import (the linter reads it).

    python tests/lint_fixtures/blind/score.py   (run from the checkout to measure)

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


def findings(path: Path) -> list[tuple[int, str]]:
    from checkers.lint.config import build_config
    from checkers.lint.engine import lint_source

    result = lint_source(str(path), path.read_bytes(), build_config({}, None, no_cache=True))
    return sorted((f.line, f.rule) for f in result.findings)


def score() -> dict:
    out = {"found": [], "missed": [], "quiet": [], "false_alarm": []}
    for path in sorted((HERE / "bad").glob("*_op.py")):
        got = findings(path)
        out["found" if got == expected(path) else "missed"].append((path.name, got))
    for path in sorted((HERE / "good").glob("*_op.py")):
        got = findings(path)
        out["false_alarm" if got else "quiet"].append((path.name, got))
    return out


if __name__ == "__main__":
    result = score()
    bad = len(result["found"]) + len(result["missed"])
    good = len(result["quiet"]) + len(result["false_alarm"])
    print(f"found {len(result['found'])}/{bad} violations on the right line; "
          f"false alarms on {len(result['false_alarm'])}/{good} correct files")
    for name, got in result["missed"]:
        print(f"  missed: {name}: {got}")
    for name, got in result["false_alarm"]:
        print(f"  false alarm: {name}: {got}")
    sys.exit(0)
