"""Op versions in op-description dumps: `documented` and `undocumented-change` findings.

`opkit dump` writes each op's version and checkpoints under the per-op key ``OpVersion``
(Paddle's readers ignore it).  A signature change from OLD to NEW that a checkpoint newer
than OLD's version documents becomes a `documented` note; where NEW carries versions but no
such checkpoint exists, the change also gets an `undocumented-change` finding (a note, or
breaking with ``require_checkpoints``).  Pure JSON: imports neither numpy nor the framework.
"""
from __future__ import annotations

from .compare import CompatReport

VERSION_KEY = "OpVersion"

# finding kind -> the checkpoint change type that documents it
COVERED_BY = {
    "attr-added": "new_attr", "attr-added-no-default": "new_attr",
    "attr-deleted": "delete_attr",
    "attr-default-changed": "modify_attr", "attr-type-changed": "modify_attr",
    "attr-flag-changed": "modify_attr",
    "input-added": "new_input", "input-added-required": "new_input",
    "output-added": "new_output", "output-added-required": "new_output",
}


def op_version(desc: dict | None) -> int:
    info = (desc or {}).get(VERSION_KEY)
    return info["version"] if info else 0


def newer_checkpoints(old_desc: dict | None, new_desc: dict | None) -> list[tuple[int, dict]]:
    """``[(version, checkpoint), ...]`` of NEW's checkpoints after OLD's version."""
    info = (new_desc or {}).get(VERSION_KEY)
    if not info:
        return []
    start = op_version(old_desc)
    return [(i + 1, cp) for i, cp in enumerate(info["checkpoints"]) if i >= start]


def find_change(cps: list[tuple[int, dict]], change_type: str, name: str | None):
    """The last newer checkpoint (version, checkpoint, change) with that change, or None."""
    found = None
    for version, cp in cps:
        for change in cp["changes"]:
            if change["type"] == change_type and (name is None or change.get("name") == name):
                found = (version, cp, change)
    return found


def _documented(finding: dict, version: int, cp: dict, change: dict) -> dict:
    op = finding["op"]
    entry = {"op": op, "kind": "documented", "name": finding["name"],
             "change": finding["kind"]}
    if "field" in finding:
        entry["field"] = finding["field"]
    upgrader = bool(cp.get("upgrader"))
    text = (f"{finding['message']}; documented in version {version} of '{op}' "
            f"({cp['note']}: {change['remark']})")
    if upgrader:
        text += "; an upgrader rewrites older programs (--programs checks its output)"
    entry.update({"old": finding["old"], "new": finding["new"], "version": version,
                  "checkpoint": cp["note"], "upgrader": upgrader, "message": text})
    return entry


def apply_versions(report: CompatReport, old: dict, new: dict,
                   require_checkpoints: bool = False) -> CompatReport:
    """Reclassify the signature findings of ``report`` with the ops' checkpoints (in place)."""
    def visit(findings: list[dict], breaking: bool) -> list[dict]:
        keep = []
        for f in findings:
            op = f["op"]
            if op not in old or op not in new or f["kind"] not in COVERED_BY:
                keep.append(f)
                continue
            cps = newer_checkpoints(old[op], new[op])
            hit = find_change(cps, COVERED_BY[f["kind"]], f["name"])
            if hit is not None:
                report.notes.append(_documented(f, *hit))
                continue
            keep.append(f)
            if VERSION_KEY in new[op]:
                undocumented.append(f)
        return keep

    undocumented: list[dict] = []
    report.breaking = visit(report.breaking, True)
    report.notes = visit(report.notes, False)
    for op in sorted(old.keys() & new.keys()):
        if VERSION_KEY in old[op] and VERSION_KEY in new[op]:
            a, b = op_version(old[op]), op_version(new[op])
            if b < a:
                undocumented.append({"op": op, "kind": "op-version", "name": op,
                                     "old": a, "new": b,
                                     "message": f"version of op '{op}' went back from {a} "
                                                f"to {b}: checkpoints were removed"})
    for f in undocumented:
        old_v = op_version(old.get(f["op"]))
        entry = {"op": f["op"], "kind": "undocumented-change", "name": f["name"],
                 "change": f["kind"], "old": f["old"], "new": f["new"],
                 "message": (f"{f['message']}: no checkpoint of '{f['op']}' after version "
                             f"{old_v} documents it (register_op_version('{f['op']}')"
                             ".add_checkpoint(...))")}
        if "field" in f:
            entry["field"] = f["field"]
        (report.breaking if require_checkpoints else report.notes).append(entry)
    return report
