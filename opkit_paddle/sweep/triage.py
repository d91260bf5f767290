"""The classification file of a sweep: every failing result is matched to a *cause* (an op,
a check, a pattern its message must contain), and each cause names what it is: a graded bug
(a row of `bugs`), a contract difference (`contracts`) or a known false alarm of opkit's
(`false_alarm`, to be fixed). Classification is per result, not per (op, check) pair: a new
failure inside a pair whose other failures are known matches no cause and is unclassified.

    {"bugs": {"41": {"grade": "bug, public API", "title": "...", "api": "paddle.atan2",
                     "versions": "3.3.1", "expected": "...", "reproducer": "..."}},
     "contracts": {"top_k ties": "Paddle's order among equal values differs ..."},
     "causes": [{"op": "atan2", "check": "extremal", "pattern": "@GRAD.* is -inf",
                 "bug": "41"},
                {"op": "*", "check": "explore", "pattern": "ties", "contract": "top_k ties"},
                {"op": "kron", "check": "kinks", "pattern": "...", "false_alarm": "..."}]}
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GRADES", "TriageError", "Cause", "Triage", "load"]

#: the grades of docs/paddle.md "Grading"
GRADES = ("bug, public API", "crash on invalid input", "contract difference", "not a bug")


class TriageError(ValueError):
    """A classification file that cannot be used: which and why."""


@dataclass(frozen=True)
class Cause:
    index: int              # its place in "causes"
    op: str                 # an op type, or "*"
    check: str
    pattern: re.Pattern
    bug: str = ""           # a key of "bugs"
    contract: str = ""      # a key of "contracts"
    false_alarm: str = ""   # what opkit gets wrong (to be fixed)

    @property
    def label(self) -> str:
        if self.bug:
            return f"bug {self.bug}"
        if self.contract:
            return f"contract: {self.contract}"
        return f"false alarm: {self.false_alarm}"

    def matches(self, op: str, check: str, message: str) -> bool:
        return self.op in ("*", op) and self.check == check and \
            self.pattern.search(message or "") is not None


@dataclass
class Triage:
    bugs: dict
    contracts: dict
    causes: list

    def classify(self, op: str, check: str, message: str) -> list[Cause]:
        """Every cause whose op, check and pattern the failure matches ([]: unclassified)."""
        return [c for c in self.causes if c.matches(op, check, message)]


def load(path) -> Triage:
    """The classification file at `path` (TriageError naming what is wrong)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise TriageError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise TriageError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise TriageError(f"{path}: expected an object with 'bugs', 'contracts', 'causes'")
    bugs, contracts = data.get("bugs") or {}, data.get("contracts") or {}
    for key, bug in bugs.items():
        if not isinstance(bug, dict) or bug.get("grade") not in GRADES:
            raise TriageError(f"{path}: bugs[{key!r}]: 'grade' must be one of "
                              f"{', '.join(map(repr, GRADES))}")
    causes = []
    for k, raw in enumerate(data.get("causes") or []):
        where = f"{path}: causes[{k}]"
        if not isinstance(raw, dict) or not raw.get("check") or "pattern" not in raw:
            raise TriageError(f"{where}: needs 'check' and 'pattern' (and 'op', default '*')")
        kinds = [name for name in ("bug", "contract", "false_alarm") if raw.get(name)]
        if len(kinds) != 1:
            raise TriageError(f"{where}: name exactly one of 'bug', 'contract', 'false_alarm'")
        if raw.get("bug") and str(raw["bug"]) not in bugs:
            raise TriageError(f"{where}: bug {raw['bug']!r} is not a key of 'bugs'")
        if raw.get("contract") and raw["contract"] not in contracts:
            raise TriageError(f"{where}: contract {raw['contract']!r} is not a key of "
                              f"'contracts'")
        try:
            pattern = re.compile(raw["pattern"])
        except re.error as exc:
            raise TriageError(f"{where}: pattern {raw['pattern']!r}: {exc}") from None
        causes.append(Cause(k, raw.get("op") or "*", raw["check"], pattern,
                            str(raw.get("bug") or ""), raw.get("contract") or "",
                            raw.get("false_alarm") or ""))
    return Triage(bugs, contracts, causes)
