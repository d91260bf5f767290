"""Read and validate op-description JSON (API.md section 8, Paddle's print_op_desc.py).

Every problem becomes a :class:`DescError` whose text is one line naming the file and the
JSON path of the bad value, e.g. ``new.json: clip.Attrs.min.type: expected an integer,
got "float"``.  Unknown extra keys are ignored.  ``extra``/``quant``/``generated`` may be
missing (older Paddle dumps predate them) and then count as ``false``.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from pathlib import Path
from typing import Any

from .kinds import ATTR_FLAGS, VAR_FLAGS

# Flags every input/output entry must have; the others default to false.
_REQUIRED_VAR_FLAGS = ("duplicable", "dispensable", "intermediate")
_SIMPLE_KEY = re.compile(r"^[A-Za-z0-9_@\-]+$")


class DescError(Exception):
    """Unreadable or malformed input; ``str()`` is the one-line message."""

    def __init__(self, label: str, json_path: str | None, message: str):
        self.label = label
        self.json_path = json_path
        self.message = message
        where = f"{label}: {json_path}: " if json_path else f"{label}: "
        super().__init__(where + message)


def path_join(base: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    seg = key if _SIMPLE_KEY.match(key) else json.dumps(key)
    return f"{base}.{seg}" if base else seg


def describe(value: Any) -> str:
    """How a wrong value is named in messages."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read_text(path: str | os.PathLike, label: str | None = None) -> str:
    """The text of a file (gzip is unpacked transparently); DescError on every failure."""
    label = label if label is not None else str(path)
    p = Path(path)
    try:
        if p.is_dir():
            raise DescError(label, None, "is a directory, not a file")
        raw = p.read_bytes()
    except FileNotFoundError:
        raise DescError(label, None, "no such file") from None
    except IsADirectoryError:
        raise DescError(label, None, "is a directory, not a file") from None
    except PermissionError:
        raise DescError(label, None, "cannot read: permission denied") from None
    except OSError as exc:
        raise DescError(label, None, f"cannot read: {exc.strerror or exc}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise DescError(label, None, f"not a valid gzip file ({exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DescError(label, None, f"not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise DescError(label, None, "empty file (expected a JSON object of op descriptions)")
    return text


def parse_json(text: str, label: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            msg = f"not valid JSON: unexpected end of file at line {exc.lineno} (truncated?)"
        else:
            msg = f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        raise DescError(label, None, msg) from None
    except RecursionError:
        raise DescError(label, None, "not valid JSON: nested too deeply") from None


def _expect_object(value: Any, label: str, jpath: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise DescError(label, jpath or "top level", f"expected {what}, got {describe(value)}")
    return value


def _expect_bool(entry: dict, key: str, label: str, jpath: str, required: bool) -> bool:
    if key not in entry:
        if required:
            raise DescError(label, jpath, f"missing key {key!r}")
        return False
    value = entry[key]
    if not isinstance(value, bool):
        raise DescError(label, path_join(jpath, key), f"expected a boolean, got {describe(value)}")
    return value


def _var_section(section: Any, label: str, jpath: str) -> dict:
    section = _expect_object(section, label, jpath, "an object of slot names")
    out = {}
    for name, entry in section.items():
        epath = path_join(jpath, name)
        entry = _expect_object(entry, label, epath, "an object of flags")
        out[name] = {flag: _expect_bool(entry, flag, label, epath, flag in _REQUIRED_VAR_FLAGS)
                     for flag in VAR_FLAGS}
        _keep_domain(entry, out[name], label, epath)
    return out


def _keep_domain(entry: dict, out: dict, label: str, jpath: str) -> None:
    """A declared domain (docs/domains.md), kept as given when it is an object with a
    string "kind"."""
    if "domain" not in entry:
        return
    dom = entry["domain"]
    if not isinstance(dom, dict) or not isinstance(dom.get("kind"), str):
        raise DescError(label, path_join(jpath, "domain"),
                        f"expected an object with a string 'kind', got {describe(dom)}")
    out["domain"] = dom


def _attr_section(section: Any, label: str, jpath: str) -> dict:
    section = _expect_object(section, label, jpath, "an object of attr names")
    out = {}
    for name, entry in section.items():
        epath = path_join(jpath, name)
        entry = _expect_object(entry, label, epath, "an object describing the attr")
        if "type" not in entry:
            raise DescError(label, epath, "missing key 'type'")
        type_id = entry["type"]
        if not isinstance(type_id, int) or isinstance(type_id, bool):
            raise DescError(label, path_join(epath, "type"),
                            f"expected an integer, got {describe(type_id)}")
        if type_id < 0:
            raise DescError(label, path_join(epath, "type"),
                            f"expected an AttrType number (0 or more), got {type_id}")
        if "default_value" not in entry:
            raise DescError(label, epath, "missing key 'default_value' (null for a required attr)")
        attr = {"type": type_id, "default_value": entry["default_value"]}
        for flag in ATTR_FLAGS:
            attr[flag] = _expect_bool(entry, flag, label, epath, False)
        _keep_domain(entry, attr, label, epath)
        out[name] = attr
    return out


_CHANGE_TYPES = ("new_attr", "modify_attr", "delete_attr", "new_input", "new_output",
                 "bugfix_with_behavior_changed")


def _string_at(entry: dict, key: str, label: str, jpath: str) -> str:
    if key not in entry:
        raise DescError(label, jpath, f"missing key {key!r}")
    if not isinstance(entry[key], str):
        raise DescError(label, path_join(jpath, key),
                        f"expected a string, got {describe(entry[key])}")
    return entry[key]


def _version_section(section: Any, label: str, jpath: str) -> dict:
    """The ``OpVersion`` value that `opkit dump` writes (docs/compat.md)."""
    section = _expect_object(section, label, jpath, "an object with version and checkpoints")
    for key in ("version", "checkpoints"):
        if key not in section:
            raise DescError(label, jpath, f"missing key {key!r}")
    version = section["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise DescError(label, path_join(jpath, "version"),
                        f"expected an integer >= 0, got {describe(version)}")
    cps = section["checkpoints"]
    cpath = path_join(jpath, "checkpoints")
    if not isinstance(cps, list):
        raise DescError(label, cpath, f"expected a list, got {describe(cps)}")
    if len(cps) != version:
        raise DescError(label, path_join(jpath, "version"),
                        f"version {version} but {len(cps)} checkpoints (the version is the "
                        "number of checkpoints)")
    out = []
    for i, cp in enumerate(cps):
        ppath = path_join(cpath, i)
        cp = _expect_object(cp, label, ppath, "a checkpoint object")
        note = _string_at(cp, "note", label, ppath)
        changes = cp.get("changes", [])
        if not isinstance(changes, list):
            raise DescError(label, path_join(ppath, "changes"),
                            f"expected a list, got {describe(changes)}")
        norm = []
        for j, ch in enumerate(changes):
            hpath = path_join(path_join(ppath, "changes"), j)
            ch = _expect_object(ch, label, hpath, "a change object")
            ctype = _string_at(ch, "type", label, hpath)
            if ctype not in _CHANGE_TYPES:
                raise DescError(label, path_join(hpath, "type"),
                                f"unknown change type {ctype!r} (one of "
                                f"{', '.join(_CHANGE_TYPES)})")
            entry = {"type": ctype, "remark": _string_at(ch, "remark", label, hpath)}
            if ctype != "bugfix_with_behavior_changed":
                entry["name"] = _string_at(ch, "name", label, hpath)
            if "default" in ch:
                entry["default"] = ch["default"]
            norm.append(entry)
        upgrader = cp.get("upgrader", False)
        if not isinstance(upgrader, bool):
            raise DescError(label, path_join(ppath, "upgrader"),
                            f"expected true or false, got {describe(upgrader)}")
        out.append({"note": note, "changes": norm, "upgrader": upgrader})
    return {"version": version, "checkpoints": out}


def validate(data: Any, label: str) -> dict:
    """Check the structure of a parsed dump; return it normalized (every flag present)."""
    data = _expect_object(data, label, "", "a JSON object mapping op types to descriptions")
    ops = {}
    for op_type, desc in data.items():
        opath = path_join("", op_type)
        if not op_type:
            raise DescError(label, '""', "empty op type")
        desc = _expect_object(desc, label, opath, "an object with Inputs, Outputs and Attrs")
        for key in ("Inputs", "Outputs", "Attrs"):
            if key not in desc:
                raise DescError(label, opath, f"missing key {key!r}")
        ops[op_type] = {
            "Inputs": _var_section(desc["Inputs"], label, path_join(opath, "Inputs")),
            "Outputs": _var_section(desc["Outputs"], label, path_join(opath, "Outputs")),
            "Attrs": _attr_section(desc["Attrs"], label, path_join(opath, "Attrs")),
        }
        if "SbpSignatures" in desc:   # opkit dumps only (checkers.compat.sbp)
            ops[op_type]["SbpSignatures"] = validate_sbp(desc["SbpSignatures"], label,
                                                         path_join(opath, "SbpSignatures"))
        if "OpVersion" in desc:       # opkit dumps only; Paddle's have no versions
            ops[op_type]["OpVersion"] = _version_section(desc["OpVersion"], label,
                                                         path_join(opath, "OpVersion"))
    return ops


def load_op_descs(path: str | os.PathLike, label: str | None = None) -> dict:
    """Read, parse and validate one op-description file (plain or gzip JSON)."""
    label = label if label is not None else str(path)
    return validate(parse_json(read_text(path, label), label), label)


def loads_op_descs(text: str, label: str = "<string>") -> dict:
    return validate(parse_json(text, label), label)


# the parallel signatures of an opkit dump (compared by checkers.compat.sbp)
def validate_sbp(section: Any, label: str, jpath: str) -> dict:
    """``{op type: sorted [text, ...]}``; DescError (naming the file and JSON path) else."""
    if not isinstance(section, dict):
        raise DescError(label, jpath, "expected an object mapping op types to lists of "
                        f"signature strings, got {describe(section)}")
    out = {}
    for op_type, sigs in section.items():
        p = path_join(jpath, op_type)
        if not isinstance(sigs, list) or not all(isinstance(s, str) and s for s in sigs):
            raise DescError(label, p, "expected a list of non-empty signature strings, got "
                            f"{describe(sigs)}")
        out[op_type] = sorted(set(sigs))
    return out
