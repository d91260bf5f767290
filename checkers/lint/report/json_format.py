"""`--format json`: a list of {path, line, col, rule, name, message} (API.md section 9)."""
from __future__ import annotations

import json


def render(findings: list, files: int, stream) -> None:
    data = [{"path": f.path, "line": f.line, "col": f.col, "rule": f.rule, "name": f.name,
             "message": f.message, "fixable": f.fixable} for f in findings]
    stream.write(json.dumps(data, indent=2) + "\n")
