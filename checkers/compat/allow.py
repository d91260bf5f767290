"""Approved breaks: ``--allow FILE`` (TOML or JSON) silences listed breaking changes.

TOML::

    [[allow]]
    op = "clip"
    kind = "attr-type-changed"
    name = "min"
    reason = "min is an int everywhere since #123"
    expires = 2025-06-30

JSON: ``{"allow": [{...}, ...]}`` or just the list.  ``op``, ``kind`` and ``reason`` are
required; ``name`` (omitted: every name of that op and kind), ``field`` (flag kinds) and
``expires`` (YYYY-MM-DD; the entry works through that day) are optional.  An expired
entry no longer silences anything and is reported as a note.
"""
from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .compare import CompatReport
from .kinds import ALLOWABLE_KINDS, ATTR_FLAGS, VAR_FLAGS
from .load import DescError, describe, parse_json, path_join, read_text

_KEYS = ("op", "kind", "name", "field", "reason", "expires")


@dataclass(frozen=True)
class AllowEntry:
    op: str
    kind: str
    name: str | None
    field: str | None
    reason: str
    expires: _dt.date | None
    where: str          # "allow.toml: allow[2]", for messages

    def matches(self, finding: dict) -> bool:
        return (finding["op"] == self.op and finding["kind"] == self.kind
                and (self.name is None or finding["name"] == self.name)
                and (self.field is None or finding.get("field") == self.field))

    def expired(self, today: _dt.date) -> bool:
        return self.expires is not None and self.expires < today

    def describe(self) -> str:
        what = self.kind + (f" '{self.name}'" if self.name else "")
        if self.field:
            what += f" ({self.field})"
        return f"{what} of op '{self.op}'"


def _parse_toml(text: str, label: str) -> Any:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DescError(label, None, f"not valid TOML: {exc}") from None


def _string(entry: dict, key: str, label: str, jpath: str, required: bool) -> str | None:
    if key not in entry:
        if required:
            raise DescError(label, jpath, f"missing key {key!r}")
        return None
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise DescError(label, path_join(jpath, key),
                        f"expected a non-empty string, got {describe(value)}")
    return value


def _date(entry: dict, label: str, jpath: str) -> _dt.date | None:
    if "expires" not in entry:
        return None
    value = entry["expires"]
    kpath = path_join(jpath, "expires")
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str):
        try:
            if len(value) == 10:
                return _dt.date.fromisoformat(value)
        except ValueError:
            pass
    try:
        got = describe(value)
    except TypeError:           # a TOML time
        got = str(value)
    raise DescError(label, kpath, f"expected a date YYYY-MM-DD, got {got}")


def parse_allow(data: Any, label: str) -> list[AllowEntry]:
    base = ""
    if isinstance(data, dict):
        if "allow" not in data:
            raise DescError(label, None, "missing key 'allow' (a list of entries)")
        data, base = data["allow"], "allow"
    if not isinstance(data, list):
        raise DescError(label, base or None, f"expected a list of entries, got {describe(data)}")
    entries = []
    for i, entry in enumerate(data):
        jpath = f"{base}[{i}]"
        if not isinstance(entry, dict):
            raise DescError(label, jpath, f"expected an object, got {describe(entry)}")
        for key in entry:
            if key not in _KEYS:
                raise DescError(label, path_join(jpath, key),
                                f"unknown key (expected one of {', '.join(_KEYS)})")
        op = _string(entry, "op", label, jpath, True)
        kind = _string(entry, "kind", label, jpath, True)
        if kind not in ALLOWABLE_KINDS:
            raise DescError(label, path_join(jpath, "kind"),
                            f"unknown breaking kind {kind!r} (one of {', '.join(ALLOWABLE_KINDS)})")
        name = _string(entry, "name", label, jpath, False)
        fld = _string(entry, "field", label, jpath, False)
        flags = set(VAR_FLAGS) | set(ATTR_FLAGS)
        if fld is not None and fld not in flags:
            raise DescError(label, path_join(jpath, "field"),
                            f"unknown flag {fld!r} (one of {', '.join(sorted(flags))})")
        reason = _string(entry, "reason", label, jpath, True)
        entries.append(AllowEntry(op, kind, name, fld, reason, _date(entry, label, jpath),
                                  f"{label}: {jpath}"))
    return entries


def load_allow(path: str | os.PathLike, label: str | None = None) -> list[AllowEntry]:
    label = label if label is not None else str(path)
    text = read_text(path, label)
    suffix = Path(path).suffix.lower()
    if suffix == ".toml" or (suffix != ".json" and text.lstrip()[:1] not in ("{", "[")):
        data = _parse_toml(text, label)
    else:
        data = parse_json(text, label)
    return parse_allow(data, label)


def apply_allow(report: CompatReport, entries: list[AllowEntry],
                today: _dt.date | None = None) -> CompatReport:
    """Move the breaks that a live entry approves to ``report.allowed``; report expired and
    unused entries as notes.  Changes ``report`` in place and returns it."""
    today = today or _dt.date.today()
    used: set[int] = set()
    still_breaking = []
    for finding in report.breaking:
        matching = [(i, e) for i, e in enumerate(entries) if e.matches(finding)]
        live = [(i, e) for i, e in matching if not e.expired(today)]
        if live:
            i, e = live[0]
            used.add(i)
            approved = dict(finding)
            approved["reason"] = e.reason
            approved["expires"] = e.expires.isoformat() if e.expires else None
            report.allowed.append(approved)
            continue
        for i, e in matching:
            used.add(i)
            report.notes.append({
                "op": finding["op"], "kind": "allow-expired", "name": finding["name"],
                "old": None, "new": None,
                "message": (f"allow-list entry {e.where} for {e.describe()} expired on "
                            f"{e.expires.isoformat()} (reason: {e.reason}); the break "
                            "counts again"),
            })
        still_breaking.append(finding)
    report.breaking = still_breaking
    for i, e in enumerate(entries):
        if i in used:
            continue
        state = f"expired on {e.expires.isoformat()} and " if e.expired(today) else ""
        report.notes.append({
            "op": e.op, "kind": "allow-expired" if state else "allow-unused", "name": e.name,
            "old": None, "new": None,
            "message": (f"allow-list entry {e.where} for {e.describe()} {state}matches no "
                        "breaking change; remove it"),
        })
    return report
