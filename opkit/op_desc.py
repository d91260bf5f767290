"""The registry as op-description JSON (API.md section 8; Paddle's tools/print_op_desc.py).

``dump_op_descs()`` returns ``{op_type: {"Inputs": ..., "Outputs": ..., "Attrs": ...}}`` for
every registered op that has a proto (ops without a maker, such as most grad ops, are
left out, as in Paddle).  Keys are sorted at every level, so ``dumps_op_descs()`` is
byte-identical across runs for the same registry.
"""
from __future__ import annotations

import json

__all__ = ["dump_op_descs", "dumps_op_descs", "op_desc", "VERSION_KEY"]


def _registry():
    try:
        from opkit import registry  # the public name (API.md section 2)
    except ImportError:  # pragma: no cover - before opkit/__init__ exposes it
        from opkit.framework import registry
    return registry


def _attr_type_ids() -> dict:
    from opkit.framework.proto import ATTR_TYPE_IDS

    return ATTR_TYPE_IDS


def _jsonable(value):
    """An attr default as plain JSON data (tuples and numpy values become lists/scalars)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist"):          # numpy scalar or array
        return _jsonable(value.tolist())
    if hasattr(value, "item"):
        return _jsonable(value.item())
    return repr(value)                    # block(s) and other objects: named, not dumped


def _var(v) -> dict:
    return {"dispensable": bool(v.dispensable), "duplicable": bool(v.duplicable),
            "extra": bool(v.extra), "intermediate": bool(v.intermediate),
            "quant": bool(v.quant)}


def op_desc(proto) -> dict:
    """One op's description from its OpProto."""
    type_ids = _attr_type_ids()
    attrs = {}
    for a in sorted(proto.attrs, key=lambda a: a.name):
        attrs[a.name] = {
            "default_value": _jsonable(a.default) if a.has_default else None,
            "extra": bool(a.extra),
            "generated": bool(getattr(a, "generated", False)),
            "quant": bool(a.quant),
            "type": type_ids[a.type],
        }
    desc = {
        "Attrs": attrs,
        "Inputs": {v.name: _var(v) for v in sorted(proto.inputs, key=lambda v: v.name)},
        "Outputs": {v.name: _var(v) for v in sorted(proto.outputs, key=lambda v: v.name)},
    }
    _add_domains(desc, proto)
    return desc


def _json_tree(value):
    if isinstance(value, dict):
        return {str(k): _json_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_tree(v) for v in value]
    return _jsonable(value)


def _add_domains(desc: dict, proto) -> None:
    """The declared domains (docs/domains.md): a "domain" object on each attr and input that
    declares one, "parameter": true on a parameter input. Absent where nothing is declared,
    so a description without domains is unchanged."""
    for a in proto.attrs:
        dom = getattr(a, "domain", None)
        if dom is not None:
            desc["Attrs"][a.name]["domain"] = _json_tree(dom.to_json())
    for v in proto.inputs:
        dom = getattr(v, "domain", None)
        if dom is not None:
            desc["Inputs"][v.name]["domain"] = _json_tree(dom.to_json())
        if getattr(v, "parameter", False):
            desc["Inputs"][v.name]["parameter"] = True


# The per-op key holding the op's version and checkpoints (Paddle's readers ignore it).
VERSION_KEY = "OpVersion"


def dump_op_descs() -> dict:
    """Every registered op that has a proto, sorted by op type, with its ``OpVersion``."""
    from opkit.framework.op_version import version_info

    registry = _registry()
    out = {}
    for op_type in sorted(registry.all_op_types()):
        proto = registry.op_info(op_type).proto
        if proto is None:
            continue
        out[op_type] = op_desc(proto)
        out[op_type][VERSION_KEY] = version_info(op_type)
        _add_sbp(out[op_type], op_type)
    return out


def _add_sbp(desc: dict, op_type: str) -> None:
    """The op's declared parallel signatures (and its grad op's), under ``SbpSignatures``
    (docs/sbp.md; `opkit compat` compares them)."""
    from opkit.framework.sbp import SBP_KEY, dump_sbp

    sigs = dump_sbp(op_type)
    if sigs:
        desc[SBP_KEY] = sigs


def dumps_op_descs(descs: dict | None = None) -> str:
    """The JSON text of ``descs`` (default: the whole registry), sorted, one key per line.

    Non-finite float defaults are written as ``NaN``/``Infinity``, as Python's json (and
    so Paddle's print_op_desc.py) does; ``opkit compat`` reads them back.
    """
    descs = dump_op_descs() if descs is None else descs
    return json.dumps(descs, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
