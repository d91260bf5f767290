"""One root cause, one failure block: failure blocks that point at the same cause (the same
line of user code, the same innermost error where one of them names no line, or the same
wrong output or gradient slot, whichever check found it) are joined (docs/harness.md, the
report's groups). `denest` takes the wrapping out of nested error
texts (`ValueError: External: [operator < x > error] ValueError: m` ->
`[operator < x > error] ValueError: m`).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["denest", "fold", "locations", "innermost_error", "same_cause", "one_line",
           "wrong_slots"]

_LOCATION = re.compile(r"([^\s():'\"]+\.py):(\d+)")
_ERROR = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Warning)): (.+?)(?= \(at |\)?$|\n)")
# a wrong value, as the judges say it (harness.judging.compare, grad_judge, checks.lod, checks.kinks)
_WRONG_OUTPUT = re.compile(r"output '([^']+)' \(shape \([^)]*\), \w+\): \d+ of \d+ elements "
                           r"differ")
_WRONG_AGAINST_ORACLE = re.compile(r"([\w.]+)\[[^\]]*\]: kernel .*?, float64 oracle ")  # honest_error
_WRONG_GRAD = (re.compile(r"(?:gradient w\.r\.t\. outputs [^:]*: |; )([\w.]+): \d+ of \d+ "
                          r"elements exceed"),                        # check_grad
               re.compile(r"([\w.]+)\[[^\]]*\]: analytic gradient "),   # lod
               re.compile(r"([\w.]+)@GRAD\[[^\]]*\] at .*: analytic "))  # kinks
_OP = r"\[operator < [^>]* > error(?:, variable '[^']*')?\]"
_PACKAGES = tuple(str(Path(__file__).resolve().parents[2] / name) + os.sep
                  for name in ("harness", "opkit"))
LINE_WIDTH = 160


def denest(text: str) -> str:
    """The nested wrappings of one error said once: the op prefix, then the innermost
    `Kind: message`."""
    pattern = re.compile(rf"(?:\b[A-Z]\w*(?:Error|Exception): )?(?:External: )?({_OP}) "
                         rf"(?:External: )?(?=\w+: )")
    text = pattern.sub(lambda m: m.group(1) + " ", text)
    return re.sub(rf"\b[A-Z]\w*(?:Error|Exception): External: ({_OP})", r"\1", text)


def locations(message: str) -> set[str]:
    """`file.py:LINE` of user code the message names (basename:line)."""
    found = set()
    for path, line in _LOCATION.findall(message or ""):
        if path.startswith("<") or "site-packages" in path or \
                str(Path(path).resolve()).startswith(_PACKAGES):
            continue        # opkit's and the harness's own lines are no op's bug
        found.add(f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}")
    return found


def innermost_error(message: str) -> str | None:
    """The last `SomethingError: text` of the message's first line (numbers kept)."""
    first = (message or "").split("\n", 1)[0]
    found = _ERROR.findall(first)
    return f"{found[-1][0]}: {found[-1][1].strip()}" if found else None


def wrong_slots(message: str) -> set[tuple[str, str]]:
    """The wrong values a failure names, whatever check found them: {("output", slot)} for
    an output's values that differ from the expected ones, {("grad", input)} for an
    input's analytic gradient that disagrees with the numeric one (first line only)."""
    first = (message or "").split("\n", 1)[0]
    found = {("output", name) for name in _WRONG_OUTPUT.findall(first)}
    found |= {("output", name) for name in _WRONG_AGAINST_ORACLE.findall(first)}
    for pattern in _WRONG_GRAD:
        found |= {("grad", name) for name in pattern.findall(first)}
    return found


def _slot_label(slots: set) -> str:
    outputs = sorted(name for kind, name in slots if kind == "output")
    grads = sorted(name for kind, name in slots if kind == "grad")
    if outputs:
        return (f"wrong output {', '.join(outputs)}"
                + ("; the gradient checks differentiate that forward" if grads else ""))
    return f"wrong gradient of {', '.join(grads)}" if grads else ""


def one_line(text: str) -> str:
    """A failure block's first line, un-nested and cut to LINE_WIDTH."""
    line = denest(text.split("\n", 1)[0]).removeprefix("FAIL ")
    return line if len(line) <= LINE_WIDTH else line[:LINE_WIDTH - 3] + "..."


def same_cause(results, order=()) -> dict[str, str]:
    """{check: the first check (in `order`) that failed for the same root cause} for the
    failed results (each check maps to itself when it is the first of its cause)."""
    rank = {name: i for i, name in enumerate(order)}
    by_check: dict[str, list] = {}
    for r in results:
        if r.status == "fail":
            by_check.setdefault(r.check, []).append(r)
    checks = sorted(by_check, key=lambda c: rank.get(c, len(rank)))
    groups, _, _ = _clusters([by_check[c] for c in checks])
    return {checks[i]: checks[groups[i][0]] for i in range(len(checks))}


def _clusters(groups_of_results: list[list]) -> tuple[dict[int, list[int]], list[set],
                                                     list[set]]:
    """({index: the indices of its cause, in order}, the user lines each names, the wrong
    slots each names) over lists of failed results."""
    n = len(groups_of_results)
    where = [set().union(*(locations(r.message) for r in rs)) if rs else set()
             for rs in groups_of_results]
    errors = [{e for e in (innermost_error(denest(r.message or "")) for r in rs) if e}
              for rs in groups_of_results]
    slots = [set().union(*(wrong_slots(r.message) for r in rs)) if rs else set()
             for rs in groups_of_results]
    forward = [any(kind == "output" for kind, _ in s) for s in slots]
    only_grad = [bool(s) and not f for s, f in zip(slots, forward)]
    label = list(range(n))                  # the cause of each; two linked: one label
    for i in range(n):
        for j in range(i + 1, n):
            # the same line; the same error where one names no line; the same wrong slot;
            # or a wrong gradient where an output is wrong (the numeric gradient
            # differentiates the op's own, wrong, forward: fix that first)
            if where[i] & where[j] or (errors[i] & errors[j] and not (where[i] and where[j])) \
                    or slots[i] & slots[j] or (forward[i] and only_grad[j]) or \
                    (only_grad[i] and forward[j]):
                old = label[j]
                label = [label[i] if x == old else x for x in label]
    return ({i: [k for k in range(n) if label[k] == label[i]] for i in range(n)}, where,
            slots)


def _without_cases(text: str) -> str:
    """A block's head without its list of cases (`[TestA/edge, ... +4 more]`): the one line
    under another block keeps room for what went wrong."""
    head, sep, rest = text.partition(": ")
    return re.sub(r" \[[^\[\]]*\]", "", head, count=1) + sep + rest


def fold(blocks: list[tuple[str, str, list]]) -> list[tuple[str, str]]:
    """[(check, text, results)] in report order -> [(check, text)], the blocks of one cause
    joined: the first in full, the others one line each under it."""
    groups, where, slots = _clusters([rs for _, _, rs in blocks])
    out = []
    for i, group in groups.items():
        if group[0] != i:
            continue
        check, text, _ = blocks[i]
        text = denest(text)
        if len(group) > 1:
            others = [one_line(_without_cases(blocks[j][1])) for j in group[1:]]
            cause = sorted(set().union(*(where[j] for j in group)))
            wrong = _slot_label(set().union(*(slots[j] for j in group)))
            label = f" ({', '.join(cause[:2])})" if cause else f" ({wrong})" if wrong else ""
            text += f"\n    the same cause{label} also failed these checks, one line each:"
            text += "".join(f"\n      {line}" for line in others)
        out.append((check, text))
    return out
