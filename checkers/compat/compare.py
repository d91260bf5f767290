"""Classify every difference between two op-description dicts (breaking or note).

The rules and their reasons are in docs/compat.md.  Input: the normalized dicts from
:func:`checkers.compat.load.validate`; output: a :class:`CompatReport`.
"""
from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from typing import Any

from .kinds import ATTR_FLAGS, FLOAT32_TYPES, VAR_FLAGS, type_name
from .sbp import compare_sbp


@dataclass
class CompatReport:
    breaking: list[dict] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)
    allowed: list[dict] = field(default_factory=list)   # breaks silenced by --allow
    old_ops: int = 0
    new_ops: int = 0

    @property
    def ok(self) -> bool:
        return not self.breaking

    def to_json(self) -> dict:
        return {"breaking": self.breaking, "notes": self.notes, "allowed": self.allowed}


# ---------------------------------------------------------------- value comparison

def _f32(x: float) -> float | None:
    """x rounded to float32, or None when it is out of float32 range."""
    try:
        r = struct.unpack("f", struct.pack("f", x))[0]
    except (OverflowError, struct.error):
        return None
    return None if math.isinf(r) and not math.isinf(x) else r


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def same_value(a: Any, b: Any, float32: bool = False) -> bool:
    """Equal as attr values: 1 == 1.0; bools only equal bools; NaN equals NaN;
    with ``float32`` numbers that round to the same float32 are equal
    (Paddle prints 0.001f as 0.0010000000474974513)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        if a == b:
            return True
        fa, fb = float(a), float(b)
        if math.isnan(fa) and math.isnan(fb):
            return True
        if float32:
            ra, rb = _f32(fa), _f32(fb)
            return ra is not None and ra == rb
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y, float32) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k], float32) for k in a)
    return type(a) is type(b) and a == b


def show(value: Any, float32: bool = False) -> str:
    """A value as written in messages: JSON spelling, float32 values in their shortest form."""
    if float32 and isinstance(value, float) and math.isfinite(value):
        r = _f32(value)
        if r is not None:
            for digits in range(1, 18):
                text = f"{value:.{digits}g}"
                if _f32(float(text)) == r:
                    return repr(float(text))
    if float32 and isinstance(value, list):
        return "[" + ", ".join(show(v, True) for v in value) + "]"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- comparison

class _Collector:
    def __init__(self, report: CompatReport):
        self.report = report

    def add(self, breaking: bool, op: str, kind: str, name: str, old: Any, new: Any,
            message: str, field: str | None = None) -> None:
        entry = {"op": op, "kind": kind, "name": name}
        if field is not None:
            entry["field"] = field
        entry.update({"old": old, "new": new, "message": message})
        (self.report.breaking if breaking else self.report.notes).append(entry)


def compare(old: dict, new: dict) -> CompatReport:
    """Every difference from ``old`` to ``new`` (normalized op-description dicts)."""
    report = CompatReport(old_ops=len(old), new_ops=len(new))
    out = _Collector(report)
    for op in sorted(old.keys() | new.keys()):
        if op not in new:
            out.add(True, op, "op-deleted", op, old[op], None,
                    f"op '{op}' deleted: saved programs that use it no longer load")
        elif op not in old:
            out.add(False, op, "op-added", op, None, new[op], f"op '{op}' added")
        else:   # no `old[op] == new[op]` shortcut: Python's == says True == 1
            for section, what in (("Inputs", "input"), ("Outputs", "output")):
                _compare_vars(out, op, what, old[op][section], new[op][section])
            _compare_attrs(out, op, old[op]["Attrs"], new[op]["Attrs"])
            compare_sbp(out, op, old[op], new[op])
            _compare_domains(out, op, old[op], new[op])
    return report


def _flag(v: bool) -> str:
    return "true" if v else "false"


def _compare_vars(out: _Collector, op: str, what: str, old: dict, new: dict) -> None:
    for name in sorted(old.keys() | new.keys()):
        o, n = old.get(name), new.get(name)
        subject = f"{what} '{name}' of op '{op}'"
        if n is None:
            if o["extra"]:
                out.add(False, op, f"{what}-deleted", name, o, None,
                        f"{subject} deleted (note: it was extra, saved models do not carry it)")
            else:
                out.add(True, op, f"{what}-deleted", name, o, None, f"{subject} deleted")
            continue
        if o is None:
            if n["dispensable"]:
                out.add(False, op, f"{what}-added", name, None, n,
                        f"dispensable {subject} added")
            else:
                out.add(True, op, f"{what}-added-required", name, None, n,
                        f"{subject} added without dispensable: programs saved before "
                        f"the change have no '{name}'")
            continue
        if o == n:
            continue
        both_extra = o["extra"] and n["extra"]
        for flag in VAR_FLAGS:
            a, b = o[flag], n[flag]
            if a == b:
                continue
            text = f"{subject}: {flag} changed from {_flag(a)} to {_flag(b)}"
            if both_extra:
                breaking, text = False, text + " (note: an extra slot is not saved in models)"
            elif flag == "dispensable":
                breaking = a and not b
                text += (" (tightened: programs that leave it out stop working)" if breaking
                         else " (relaxed: it may now be left out)")
            elif flag == "extra":
                if a and not b:     # becomes part of saved models: old ones lack it
                    breaking = not n["dispensable"]
                    text += (" (saved models lack it and it is not dispensable)" if breaking
                             else " (it is dispensable, so models without it still load)")
                else:
                    breaking = False
                    text += " (models that carry it still load; new ones drop it)"
            else:                   # duplicable, intermediate, quant
                breaking = True
            out.add(breaking, op, f"{what}-flag-changed", name, a, b, text, field=flag)


def _compare_attrs(out: _Collector, op: str, old: dict, new: dict) -> None:
    for name in sorted(old.keys() | new.keys()):
        o, n = old.get(name), new.get(name)
        subject = f"attr '{name}' of op '{op}'"
        if n is None:
            if o["extra"]:
                out.add(False, op, "attr-deleted", name, o, None,
                        f"{subject} deleted (note: it was extra, saved models do not carry it)")
            else:
                out.add(True, op, "attr-deleted", name, o, None, f"{subject} deleted")
            continue
        if o is None:
            tname = type_name(n["type"])
            if n["default_value"] is None:
                out.add(True, op, "attr-added-no-default", name, None, n,
                        f"attr '{name}' ({tname}) of op '{op}' added without a default: "
                        "programs saved before the change have no value for it")
            else:
                f32 = n["type"] in FLOAT32_TYPES
                out.add(False, op, "attr-added", name, None, n,
                        f"attr '{name}' ({tname}) of op '{op}' added with default "
                        f"{show(n['default_value'], f32)}")
            continue
        both_extra = o["extra"] and n["extra"]
        extra_note = " (note: an extra attr is not saved in models)"
        if o["type"] != n["type"]:
            text = (f"{subject}: type changed from {type_name(o['type'])} "
                    f"to {type_name(n['type'])}")
            out.add(not both_extra, op, "attr-type-changed", name, type_name(o["type"]),
                    type_name(n["type"]), text + (extra_note if both_extra else ""))
        f32 = o["type"] in FLOAT32_TYPES or n["type"] in FLOAT32_TYPES
        a, b = o["default_value"], n["default_value"]
        if not same_value(a, b, f32):
            if a is None:
                breaking = False
                text = f"{subject}: default {show(b, f32)} given to a formerly required attr"
            elif b is None:
                breaking = True
                text = (f"{subject}: default {show(a, f32)} removed, the attr is now required")
            else:
                breaking = True
                text = f"{subject}: default changed from {show(a, f32)} to {show(b, f32)}"
            if both_extra:
                breaking, text = False, text + extra_note
            out.add(breaking, op, "attr-default-changed", name, a, b, text)
        for flag in ATTR_FLAGS:
            fa, fb = o[flag], n[flag]
            if fa == fb:
                continue
            text = f"{subject}: {flag} changed from {_flag(fa)} to {_flag(fb)}"
            if flag == "generated":
                breaking = False
                text += " (who declares the attr, not what a saved model holds)"
            elif flag == "extra":
                if fa and not fb:
                    breaking = n["default_value"] is None
                    text += (" (saved models lack it and it has no default)" if breaking
                             else " (it has a default, so models without it still load)")
                else:
                    breaking = False
                    text += " (models that carry it still load; new ones drop it)"
            elif both_extra:
                breaking, text = False, text + extra_note
            else:                   # quant
                breaking = True
            out.add(breaking, op, "attr-flag-changed", name, fa, fb, text, field=flag)


# -- declared domains (docs/domains.md) ------------------------------------------------------
def _compare_domains(out: _Collector, op: str, old: dict, new: dict) -> None:
    """`domain-narrowed` (breaking) / `domain-widened` (a note) for every attr and input
    whose declared domain changed; only where both sides declare one (a description from a
    tool that writes no domains, Paddle's print_op_desc.py, compares nothing here). A domain
    removed on the new side is a widening."""
    from opkit.framework.domains import Domain

    for section, what in (("Attrs", "attr"), ("Inputs", "input")):
        o_sec, n_sec = old.get(section, {}), new.get(section, {})
        for name in sorted(o_sec.keys() & n_sec.keys()):
            a, b = o_sec[name].get("domain"), n_sec[name].get("domain")
            if a is None or a == b:
                continue
            subject = f"{what} '{name}' of op '{op}'"
            try:
                da = Domain.from_json(a)
                db = Domain.from_json(b) if b is not None else None
            except (KeyError, TypeError, ValueError, IndexError):
                continue
            if db is None:
                out.add(False, op, "domain-widened", name, a, None,
                        f"{subject}: domain {da.describe()} no longer declared (any value)")
                continue
            wider = db.covers(da)
            narrower = da.covers(db)
            if wider and not narrower:
                out.add(False, op, "domain-widened", name, a, b,
                        f"{subject}: domain widened from {da.describe()} to {db.describe()}")
            elif not wider:
                left_out = ""
                if da.kind == db.kind and da.kind in ("set", "dtype"):
                    gone = [v for v in da.values if v not in db.values]
                    if gone:
                        left_out = f" ({', '.join(repr(v) for v in gone)} no longer accepted)"
                out.add(True, op, "domain-narrowed", name, a, b,
                        f"{subject}: domain narrowed from {da.describe()} to "
                        f"{db.describe()}{left_out}: saved programs that use the values left "
                        "out stop working")
