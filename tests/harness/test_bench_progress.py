"""`opkit bench --against` progress: `\\r` updates only on a terminal; off one (CI logs) a
line per round."""
from __future__ import annotations

import io

from opkit.cli.bench import round_progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _rounds(stream, quiet=False):
    progress = round_progress(stream, 9, quiet=quiet)
    for done in (1, 2, 3):
        progress(done, 3)
    return stream.getvalue()


def test_off_a_terminal_one_line_per_round():
    text = _rounds(io.StringIO())
    assert "\r" not in text
    assert text.splitlines() == [f"round {k}/3 (at most 9)" for k in (1, 2, 3)]


def test_on_a_terminal_one_rewritten_line():
    text = _rounds(_Terminal())
    assert "\n" not in text and text.count("\r") == 3
    assert text.endswith("round 3/3 (at most 9)")


def test_json_prints_no_progress():
    assert _rounds(io.StringIO(), quiet=True) == ""
