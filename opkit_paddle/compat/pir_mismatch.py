"""Paddle 3's static-graph Python API builds PIR programs only; the Paddle backend keeps the
process in the legacy static graph (`FLAGS_enable_pir_api=0`) to run op types by name. A
test that calls that API on a legacy `paddle.static.data` Variable (`paddle.tanh(x)` inside
`program_guard`) gets Paddle's TypeError "must be Value, but got Variable": a limit of the
mode, not a finding about the test or the kernel. `reason(...)` names it so the mode
reports a skip, also when the test caught that TypeError and failed in its handler (Paddle's
test_compare_op.py: `except TypeError: self.fail(...)`); any other failure (the same words
raised outside Paddle, another TypeError, the PIR graph on) is left a failure."""
from __future__ import annotations

import os
import re

__all__ = ["REASON", "reason"]

REASON = ("Paddle 3's static API builds PIR programs only, and the Paddle backend keeps this "
          "process in the legacy static graph (FLAGS_enable_pir_api=0): the test's "
          "static-graph API call got a legacy Variable ({detail})")

_MISMATCH = re.compile(r"\bmust be (?:a )?(?:list of )?(?:pir\.)?Value\b[^\n]*?"
                       r"but got (?:paddle\.base\.framework\.)?Variable\b")


def _legacy_graph(paddle) -> bool:
    try:
        return not paddle.get_flags(["FLAGS_enable_pir_api"])["FLAGS_enable_pir_api"]
    except Exception:  # noqa: BLE001 - a Paddle without the flag: no such mismatch
        return False


def reason(exc: BaseException, tb, paddle) -> str | None:
    """The skip reason when `exc` (with traceback `tb`), or the exception it was raised while
    handling, is the PIR/legacy mismatch raised inside the real `paddle` package while the
    legacy graph is on; else None."""
    if paddle is None or not _legacy_graph(paddle):
        return None
    root = os.path.dirname(os.path.abspath(paddle.__file__)) + os.sep
    for _ in range(3):
        if exc is None:
            return None
        found = _mismatch(exc, tb, root)
        if found:
            return found
        exc = exc.__cause__ or exc.__context__
        tb = getattr(exc, "__traceback__", None)
    return None


def _mismatch(exc, tb, root) -> str | None:
    if not isinstance(exc, TypeError) or _MISMATCH.search(str(exc)) is None:
        return None
    innermost = None
    while tb is not None:
        innermost, tb = tb, tb.tb_next
    if innermost is None or \
            not os.path.abspath(innermost.tb_frame.f_code.co_filename).startswith(root):
        return None
    detail = re.sub(r"\s*\(at [^)]*\)", "", " ".join(str(exc).split()))
    return REASON.format(detail=detail[:160])
