"""`# opkit: ignore`, `# opkit: ignore[OPK001,OPK004]` and `# opkit: ignore[input-mutation]`
comments, read from real comment tokens."""
from __future__ import annotations

import io
import re
import tokenize

PATTERN = re.compile(r"#\s*opkit:\s*ignore\b(?:\[([A-Za-z0-9_,\s-]*)\])?")
ALL = frozenset({"*"})


def suppressions(text: str) -> dict[int, frozenset]:
    """line -> the codes ignored there (`{"*"}` for all)."""
    if "opkit:" not in text:
        return {}
    out: dict[int, frozenset] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return {}
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        match = PATTERN.search(tok.string)
        if not match:
            continue
        codes = ALL if match.group(1) is None else frozenset(
            c.strip().upper() for c in match.group(1).split(",") if c.strip())
        out[tok.start[0]] = out.get(tok.start[0], frozenset()) | codes
    return out


def is_suppressed(table: dict, line: int, code: str, name: str = "") -> bool:
    """Whether `# opkit: ignore[...]` on `line` names the rule by code (OPK001) or by name
    (input-mutation), or ignores everything."""
    codes = table.get(line)
    return bool(codes) and ("*" in codes or code in codes or
                            (bool(name) and name.upper() in codes))
