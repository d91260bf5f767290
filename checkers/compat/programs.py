"""`opkit compat OLD.json NEW.json --programs DIR`: replay saved programs on the current registry.

The seam: this module imports the opkit framework and numpy (the rest of checkers.compat is
pure JSON and never imports it).  For every saved model under DIR (a folder with
``__model__.json``, written by ``opkit.io.save_inference_model``) it

1. applies the registry's upgraders to the program's ops (saved op versions -> current),
2. checks every upgraded op against NEW's descriptions (``program-incompatible`` if an op,
   slot or attr is unknown, or a required input / attr is missing),
3. runs the saved sample feed and compares each recorded output, op by op, with the saved
   value (tolerances: ``opkit.tolerances.output_tolerance``, the harness's table).  The first op whose outputs
   differ is named in a ``behavior-changed`` finding: breaking, unless a checkpoint of that
   op newer than the program's saved version has ``bugfix_with_behavior_changed`` (a note).

Before the models, when OLD is given, every op whose checkpoints newer than OLD's version
carry an upgrader is checked once more on an op synthesized from OLD's description (every
slot used, every attr at its default): the upgraders' output must fit NEW's description.
"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from .compare import CompatReport
from .load import DescError

MODEL_FILE = "__model__.json"


def find_models(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob(MODEL_FILE) if p.is_file())


def _add(report: CompatReport, breaking: bool, op: str, kind: str, name: str, message: str,
         old=None, new=None, **extra) -> None:
    entry = {"op": op, "kind": kind, "name": name, "old": old, "new": new}
    entry.update(extra)
    entry["message"] = message
    (report.breaking if breaking else report.notes).append(entry)


def op_fits_desc(od: dict, desc: dict | None) -> list[str]:
    """What keeps one program op (a dict of program JSON) from satisfying an op description."""
    if desc is None:
        return [f"op '{od.get('type')}' is not in the new op descriptions"]
    problems = []
    for section, key, what in (("Inputs", "inputs", "input"), ("Outputs", "outputs", "output")):
        given = {slot: names for slot, names in (od.get(key) or {}).items() if names}
        for slot in sorted(given):
            if slot not in desc[section]:
                problems.append(f"{what} slot '{slot}' is not in the new description")
        if section == "Inputs":
            for slot, flags in sorted(desc[section].items()):
                if slot not in given and not flags["dispensable"] and not flags["extra"]:
                    problems.append(f"required {what} '{slot}' is missing")
    attrs = od.get("attrs") or {}
    for name in sorted(attrs):
        if name not in desc["Attrs"]:
            problems.append(f"attr '{name}' is not in the new description")
    for name, a in sorted(desc["Attrs"].items()):
        if name not in attrs and a["default_value"] is None and not a["extra"]:
            problems.append(f"attr '{name}' has no default and the program has no value")
    return problems


def _first_difference(saved: np.ndarray, now: np.ndarray):
    """None when equal within tolerance, else (text, saved_value, new_value)."""
    from opkit.tolerances import output_tolerance

    saved, now = np.asarray(saved), np.asarray(now)
    if saved.shape != now.shape:
        return (f"shape changed from {list(saved.shape)} to {list(now.shape)}", None, None)
    if saved.dtype != now.dtype:
        return (f"dtype changed from {saved.dtype.name} to {now.dtype.name}", saved.dtype.name,
                now.dtype.name)
    if saved.size == 0:
        return None
    if saved.dtype.kind in "fc" or now.dtype.kind in "fc":
        atol, rtol = output_tolerance(now.dtype, saved.dtype)
        a = saved.astype(np.float64)
        b = now.astype(np.float64)
        bad = ~np.isclose(b, a, atol=atol, rtol=rtol, equal_nan=True)
    else:
        atol = rtol = 0.0
        bad = saved != now
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    sv, nv = saved[idx].item(), now[idx].item()
    diff = np.abs(saved.astype(np.float64) - now.astype(np.float64))
    text = (f"at {list(idx)} saved {sv!r}, now {nv!r} (|diff| {abs(nv - sv):.3g} > atol "
            f"{atol:g} + rtol {rtol:g} * |saved|); {int(bad.sum())} of {bad.size} values "
            f"differ, max |diff| {float(np.nanmax(diff)):.3g}")
    return text, sv, nv


def _bugfix(op_type: str, saved_version: int):
    from opkit.framework.op_version import checkpoints

    for i, cp in enumerate(checkpoints(op_type)):
        if i < saved_version:
            continue
        for change in cp.changes:
            if change["type"] == "bugfix_with_behavior_changed":
                return i + 1, cp, change
    return None


def _file_error(exc) -> DescError:
    """A ModelFileError ("FILE: what is wrong") as the checker's unreadable-input error."""
    where, _, what = exc.raw_message.partition(": ")
    return DescError(where, None, what)


def check_program(report: CompatReport, new: dict, model_dir: Path, label: str) -> None:
    from opkit.framework import errors
    from opkit.framework.executor import Executor
    from opkit.framework.op_version import checkpoints, op_version, upgrade_program_dict
    from opkit.framework.place import CPUPlace
    from opkit.framework.scope import Scope
    from opkit.io import ModelFileError, load_inference_model, load_sample, read_model

    try:
        data = read_model(model_dir)
    except ModelFileError as exc:
        raise _file_error(exc) from None
    saved_versions = dict(data.get("op_version_map") or {})
    upgraded = copy.deepcopy(data)
    try:
        upgrade_program_dict(upgraded, label)
    except errors.EnforceNotMet as exc:
        op = ""
        for t in saved_versions:
            if f"op '{t}'" in str(exc):
                op = t
        _add(report, True, op, "program-incompatible", label,
             f"saved program '{label}' does not load: {exc.raw_message}")
        return
    bad = False
    for b_i, block in enumerate(upgraded["blocks"]):
        for o_i, od in enumerate(block.get("ops", [])):
            t = od.get("type")
            for problem in op_fits_desc(od, new.get(t)):
                bad = True
                v0, v1 = saved_versions.get(t, 0), op_version(t)
                ups = [i + 1 for i, cp in enumerate(checkpoints(t))
                       if i >= v0 and cp.upgrader is not None]
                if ups:
                    how = "after the upgrader" + ("s" if len(ups) > 1 else "") + \
                          f" of version {', '.join(map(str, ups))}"
                elif v1 > v0:
                    span = f"version {v1}" if v1 == v0 + 1 else f"versions {v0 + 1}..{v1}"
                    how = f"with no upgrader in {span}"
                else:
                    how = "(no newer version)"
                _add(report, True, t, "program-incompatible", label,
                     f"saved program '{label}', op '{t}' (blocks[{b_i}].ops[{o_i}], saved at "
                     f"version {v0}) {how}: {problem}")
    if bad:
        return
    exe = Executor(CPUPlace())
    scope = Scope()
    try:
        program, feed, fetch_vars = load_inference_model(model_dir, exe, scope=scope)
        sample = load_sample(model_dir)
    except ModelFileError as exc:
        raise _file_error(exc) from None
    except errors.EnforceNotMet as exc:
        _add(report, True, exc.op_type or "", "program-incompatible", label,
             f"saved program '{label}' does not load: {exc}")
        return
    upgrades = {t: (v, op_version(t)) for t, v in saved_versions.items() if op_version(t) != v}
    up_text = ", ".join(f"{t} {a}->{b}" for t, (a, b) in sorted(upgrades.items()))
    up_text = f"upgraded {up_text}" if up_text else "no upgrade needed"
    if sample is None:
        _add(report, False, "", "program-checked", label,
             f"saved program '{label}' loads and fits the new descriptions ({up_text}); it has "
             "no sample, so results were not replayed")
        return
    fetch = [v.name for v in fetch_vars]
    saved_values = dict(sample["vars"])
    saved_values.update(zip(fetch, sample["fetch"]))
    block = program.global_block()
    names = [n for n in saved_values if block.has_var(n)]
    try:
        values = exe.run(program, feed=sample["feed"], fetch_list=names, scope=scope)
    except errors.EnforceNotMet as exc:
        _add(report, True, exc.op_type or "", "program-incompatible", label,
             f"saved program '{label}': running its sample failed: {exc}")
        return
    now = dict(zip(names, values))
    for o_i, od in enumerate(block.ops):
        for var in od.output_arg_names():
            if var not in now:
                continue
            diff = _first_difference(saved_values[var], now[var])
            if diff is None:
                continue
            text, sv, nv = diff
            t = od.type
            saved_v = saved_versions.get(t, 0)
            cover = _bugfix(t, saved_v)
            message = (f"saved program '{label}': output '{var}' of op '{t}' (ops[{o_i}]) "
                       f"changed {text}")
            if cover is not None:
                version, cp, change = cover
                message += (f"; covered by version {version} of '{t}' ({cp.note}: "
                            f"{change['remark']})")
            else:
                message += (f"; no checkpoint of '{t}' after version {saved_v} declares "
                            "bugfix_with_behavior_changed")
            _add(report, cover is None, t, "behavior-changed", label, message, old=sv, new=nv,
                 var=var)
            return
    _add(report, False, "", "program-checked", label,
         f"saved program '{label}' loads, fits the new descriptions ({up_text}) and "
         f"reproduces its {len(names)} saved values")


def registry_mismatch(new: dict, op_types) -> str | None:
    """Why the current registry is not the release NEW describes (for these ops), or None."""
    from opkit.framework.op_version import op_version
    from opkit.framework.registry import has_op, op_info
    from opkit.op_desc import op_desc

    from .compare import compare
    from .load import validate
    from .versions import op_version as desc_version

    for t in sorted(op_types):
        if t not in new:
            continue
        if not has_op(t) or op_info(t).proto is None:
            return f"op '{t}' is in NEW but not registered"
        mine = validate({t: op_desc(op_info(t).proto)}, "registry")
        diff = compare(mine, {t: new[t]})
        first = (diff.breaking + diff.notes)[:1]
        if first:
            return f"op '{t}': {first[0]['message']} (registry -> NEW)"
        if "OpVersion" in new[t] and desc_version(new[t]) != op_version(t):
            return (f"op '{t}' is at version {op_version(t)} in the registry but "
                    f"{desc_version(new[t])} in NEW")
    return None


# a value of each AttrType for a required attr of a synthesized op (AttrType numbers)
_PLACEHOLDER = {0: 0, 1: 0.0, 2: "", 3: [], 4: [], 5: [], 6: False, 7: [], 9: 0, 11: [],
                12: [], 15: 0.0, 16: 0.0, 17: []}


def synthesized_op(op_type: str, old_desc: dict) -> dict:
    """An op as OLD's description allows it: every slot given a variable, every attr
    (not extra) its default, or a placeholder of its type when it has none."""
    def slots(section):
        return {s: [f"{s.lower()}_0"] for s, f in sorted(old_desc[section].items())
                if not f["extra"]}
    attrs = {}
    for name, a in sorted(old_desc["Attrs"].items()):
        if a["extra"]:
            continue
        if a["default_value"] is not None:
            attrs[name] = a["default_value"]
        elif a["type"] in _PLACEHOLDER:
            attrs[name] = _PLACEHOLDER[a["type"]]
    return {"type": op_type, "inputs": slots("Inputs"), "outputs": slots("Outputs"),
            "attrs": attrs}


def check_upgraders(report: CompatReport, old: dict, new: dict, new_label: str) -> None:
    """Every op whose newer checkpoints carry an upgrader: the upgraders' output, for an op
    as OLD describes it, must fit NEW's description (``program-incompatible`` if not)."""
    from opkit.framework import errors
    from opkit.framework.op_version import checkpoints, upgrade_op_desc

    from .versions import op_version as desc_version

    for t in sorted(old.keys() & new.keys()):
        v0 = desc_version(old[t])
        ups = [i + 1 for i, cp in enumerate(checkpoints(t)) if i >= v0 and cp.upgrader]
        if not ups:
            continue
        where = f"upgrader of version {', '.join(map(str, ups))} of op '{t}'"
        try:
            od = upgrade_op_desc(synthesized_op(t, old[t]), v0)
        except errors.EnforceNotMet as exc:
            _add(report, True, t, "program-incompatible", f"{t} (as OLD describes it)",
                 f"the {where} fails on an op as OLD describes it: {exc.raw_message}")
            continue
        for problem in op_fits_desc(od, new.get(t)):
            _add(report, True, t, "program-incompatible", f"{t} (as OLD describes it)",
                 f"the {where}, applied to an op as OLD describes it, gives an op that does "
                 f"not fit {new_label}: {problem}")


def check_programs(report: CompatReport, new: dict, programs_dir,
                   new_label: str = "NEW", old: dict | None = None) -> CompatReport:
    """Check every saved model under ``programs_dir`` (in place); DescError for bad input,
    and when the current registry is not the release ``new`` describes."""
    root = Path(programs_dir)
    if not root.is_dir():
        raise DescError(str(programs_dir), None, "--programs: no such directory")
    models = find_models(root)
    if not models:
        raise DescError(str(programs_dir), None,
                        f"--programs: no saved model ({MODEL_FILE}) under this directory")
    from opkit.io import ModelFileError, read_model

    used = set()
    for model_dir in models:
        try:
            data = read_model(model_dir)
        except ModelFileError as exc:
            raise _file_error(exc) from None
        used |= {od.get("type") for b in data["blocks"] if isinstance(b, dict)
                 for od in b.get("ops", []) if isinstance(od, dict)}
    why = registry_mismatch(new, used)
    if why is not None:
        raise DescError(new_label, None,
                        f"--programs replays with the current registry, which is not the "
                        f"release this file describes: {why}; load its op library with --ops")
    if old is not None:
        check_upgraders(report, old, new, new_label)
    for model_dir in models:
        label = str(Path(programs_dir) / model_dir.relative_to(root))
        check_program(report, new, model_dir, label)
    return report
