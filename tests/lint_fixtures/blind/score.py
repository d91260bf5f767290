"""The blind set of `opkit lint`: op files written BEFORE the rules were extended for them
(issue 26), in forms the earlier rules did not follow. `bad/` files hold one violation each,
marked `# expect: OPKnnn` on its line; `good/` files are correct but look suspicious.
`*/oplib/` is a small package of helpers that some op files import (the linter reads it).

    python tests/lint_fixtures/blind/score.py   (run from the checkout to measure)

A bad file counts as found when the only finding is the expected rule on the marked line;
a good file is a false alarm when it has any finding."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the scoring is the precision set's (tests/lint_fixtures/precision/score.py), on this folder:
# op files only (`*_op.py`; `oplib/` holds their helpers), linted under their whole path so
# that the helpers they import beside them are read
_spec = importlib.util.spec_from_file_location(
    "precision_score", HERE.parent / "precision" / "score.py")
_precision = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_precision)
PATTERN = "*_op.py"
expected = _precision.expected


def findings(path: Path) -> list[tuple[int, str]]:
    return _precision.findings(path, full_path=True)


def score() -> dict:
    return _precision.score(HERE, PATTERN, full_path=True)


if __name__ == "__main__":
    _precision.report(score())
    sys.exit(0)
