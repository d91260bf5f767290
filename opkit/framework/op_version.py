"""Op versions: checkpoints that document how an op's signature or behaviour changed.

Paddle's ``REGISTER_OP_VERSION(op).AddCheckpoint(note, OpVersionDesc()...)`` in snake_case::

    register_op_version("clip").add_checkpoint(
        "Min and Max may be given as tensors",
        OpVersionDesc().new_input("Min", "the lower bound as a tensor"),
        upgrader=None)   # optional: f(op_desc_dict) -> op_desc_dict of this version

An op's version is its number of checkpoints (0 when it has none).  A checkpoint may carry
an *upgrader*: a function that rewrites the description of one op of the previous version
(``{"type", "inputs", "outputs", "attrs"}``, as in program JSON) into one of this version.
:func:`upgrade_program_dict` applies them when a saved program is loaded.
"""
from __future__ import annotations

import contextlib
import copy
import os
import sys
from dataclasses import dataclass, field

from opkit.framework import errors

__all__ = ["OpVersionDesc", "Checkpoint", "OpVersionRegistrar", "register_op_version",
           "op_version", "checkpoints", "version_info", "op_version_map",
           "upgrade_op_desc", "upgrade_program_dict", "scratch", "CHANGE_TYPES"]

CHANGE_TYPES = ("new_attr", "modify_attr", "delete_attr", "new_input", "new_output",
                "bugfix_with_behavior_changed")


def _text(value, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise errors.InvalidArgument("%s must be a non-empty string, got %r", what, value)
    return value


def _jsonable(value):
    """A default as plain JSON data (for the dump)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return _jsonable(value.tolist())
    return repr(value)


class OpVersionDesc:
    """The changes of one checkpoint; every method returns the desc, for chaining."""

    def __init__(self):
        self.changes: list[dict] = []

    def _add(self, type_: str, name: str | None, remark: str, **extra) -> "OpVersionDesc":
        entry = {"type": type_}
        if name is not None:
            entry["name"] = _text(name, f"OpVersionDesc.{type_}: name")
        entry["remark"] = _text(remark, f"OpVersionDesc.{type_}: remark")
        entry.update(extra)
        self.changes.append(entry)
        return self

    def new_attr(self, name: str, remark: str, default) -> "OpVersionDesc":
        return self._add("new_attr", name, remark, default=_jsonable(default))

    def modify_attr(self, name: str, remark: str, default) -> "OpVersionDesc":
        return self._add("modify_attr", name, remark, default=_jsonable(default))

    def delete_attr(self, name: str, remark: str) -> "OpVersionDesc":
        return self._add("delete_attr", name, remark)

    def new_input(self, name: str, remark: str) -> "OpVersionDesc":
        return self._add("new_input", name, remark)

    def new_output(self, name: str, remark: str) -> "OpVersionDesc":
        return self._add("new_output", name, remark)

    def bugfix_with_behavior_changed(self, remark: str) -> "OpVersionDesc":
        return self._add("bugfix_with_behavior_changed", None, remark)

    def __repr__(self):
        return f"OpVersionDesc({self.changes!r})"


@dataclass
class Checkpoint:
    note: str
    changes: list = field(default_factory=list)
    upgrader: object = None      # f(op_desc_dict) -> op_desc_dict, or None

    def to_json(self) -> dict:
        out = {"note": self.note, "changes": copy.deepcopy(self.changes),
               "upgrader": self.upgrader is not None}
        if self.upgrader is not None:
            out["upgrader_name"] = getattr(self.upgrader, "__qualname__", repr(self.upgrader))
        return out


class OpVersionRegistrar:
    """The checkpoints of one op, oldest first."""

    def __init__(self, op_type: str, source: str = ""):
        self.op_type = op_type
        self.source = source
        self.checkpoints: list[Checkpoint] = []

    @property
    def version(self) -> int:
        return len(self.checkpoints)

    def add_checkpoint(self, note: str, desc: OpVersionDesc | None = None,
                       upgrader=None) -> "OpVersionRegistrar":
        note = _text(note, f"register_op_version('{self.op_type}').add_checkpoint: note")
        if desc is not None and not isinstance(desc, OpVersionDesc):
            raise errors.InvalidArgument(
                "register_op_version('%s').add_checkpoint: expected an OpVersionDesc, got %r",
                self.op_type, desc)
        if upgrader is not None and not callable(upgrader):
            raise errors.InvalidArgument(
                "register_op_version('%s').add_checkpoint: upgrader must be callable "
                "f(op_desc_dict) -> op_desc_dict, got %r", self.op_type, upgrader)
        changes = list(desc.changes) if desc is not None else []
        self.checkpoints.append(Checkpoint(note, changes, upgrader))
        return self


_VERSIONS: dict[str, OpVersionRegistrar] = {}


def register_op_version(op_type: str) -> OpVersionRegistrar:
    """The registrar of ``op_type``; registering one op's versions from two places is an
    error (a module loaded a second time starts its op's checkpoints afresh)."""
    _text(op_type, "register_op_version: op type")
    frame = sys._getframe(1)
    source = os.path.realpath(frame.f_code.co_filename)
    old = _VERSIONS.get(op_type)
    if old is not None and old.source != source:
        raise errors.AlreadyExists("op versions of '%s' are registered twice: first by %s, "
                                   "again by %s", op_type, old.source, source)
    registrar = OpVersionRegistrar(op_type, source)
    _VERSIONS[op_type] = registrar
    return registrar


def _ensure_builtin_ops() -> None:
    from opkit.framework.registry import all_op_types

    all_op_types()      # imports reference_ops once (they may register versions)


def op_version(op_type: str) -> int:
    """The number of checkpoints of ``op_type`` (0 without any)."""
    _ensure_builtin_ops()
    reg = _VERSIONS.get(op_type)
    return reg.version if reg is not None else 0


def checkpoints(op_type: str) -> list[Checkpoint]:
    _ensure_builtin_ops()
    reg = _VERSIONS.get(op_type)
    return list(reg.checkpoints) if reg is not None else []


def version_info(op_type: str) -> dict:
    """``{"version": N, "checkpoints": [...]}``: the dump's per-op ``OpVersion`` value."""
    cps = checkpoints(op_type)
    return {"version": len(cps), "checkpoints": [c.to_json() for c in cps]}


def op_version_map(op_types=None) -> dict[str, int]:
    """``{op_type: version}`` for ``op_types`` (default: every op with checkpoints)."""
    _ensure_builtin_ops()
    if op_types is None:
        op_types = [t for t, r in _VERSIONS.items() if r.version]
    return {t: op_version(t) for t in sorted(set(op_types))}


def upgrade_op_desc(op_desc: dict, from_version: int, where: str = "") -> dict:
    """Apply the upgraders of the checkpoints after ``from_version`` in order; refuse a
    version newer than the registry's."""
    op_type = op_desc.get("type")
    current = op_version(op_type)
    prefix = f"{where}: " if where else ""
    if not isinstance(from_version, int) or isinstance(from_version, bool) or from_version < 0:
        raise errors.InvalidArgument("%sop '%s': version must be an integer >= 0, got %r",
                                     prefix, op_type, from_version)
    if from_version > current:
        raise errors.Unimplemented(
            "%sop '%s' was saved at version %d, newer than this registry's version %d of it; "
            "load it with a newer opkit / op library", prefix, op_type, from_version, current)
    desc = op_desc
    for index in range(from_version, current):
        cp = checkpoints(op_type)[index]
        if cp.upgrader is None:
            continue
        try:
            out = cp.upgrader(copy.deepcopy(desc))
        except Exception as exc:  # noqa: BLE001 - the user's upgrader
            raise errors.InvalidArgument(
                "%sop '%s': the upgrader of checkpoint %d (%r) failed: %s: %s", prefix,
                op_type, index + 1, cp.note, type(exc).__name__, exc) from exc
        if not isinstance(out, dict) or out.get("type") != op_type:
            raise errors.InvalidArgument(
                "%sop '%s': the upgrader of checkpoint %d (%r) must return the op "
                "description dict of the same op type, got %r", prefix, op_type, index + 1,
                cp.note, out if not isinstance(out, dict) else out.get("type"))
        desc = out
    return desc


def upgrade_program_dict(data: dict, where: str = "program") -> dict:
    """Rewrite every op of a program JSON dict to the registry's versions (in place)."""
    saved = data.get("op_version_map")
    if saved is None:
        saved = {}
    if not isinstance(saved, dict):
        raise errors.InvalidArgument("%s: op_version_map must be an object, got %r", where,
                                     type(saved).__name__)
    for b_i, block in enumerate(data.get("blocks", [])):
        ops = block.get("ops", []) if isinstance(block, dict) else []
        for o_i, od in enumerate(ops):
            if not isinstance(od, dict):
                continue
            version = saved.get(od.get("type"), 0)
            ops[o_i] = upgrade_op_desc(od, version, f"{where}: blocks[{b_i}].ops[{o_i}]")
    data["op_version_map"] = op_version_map(
        [od.get("type") for block in data.get("blocks", []) if isinstance(block, dict)
         for od in block.get("ops", []) if isinstance(od, dict)])
    return data


@contextlib.contextmanager
def scratch():
    """Snapshot the op versions and restore them on exit (tests, examples)."""
    _ensure_builtin_ops()
    saved = {k: (v.source, list(v.checkpoints)) for k, v in _VERSIONS.items()}
    try:
        yield
    finally:
        _VERSIONS.clear()
        for k, (source, cps) in saved.items():
            reg = OpVersionRegistrar(k, source)
            reg.checkpoints = cps
            _VERSIONS[k] = reg
