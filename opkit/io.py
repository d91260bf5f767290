"""Saved inference models, in Fluid's spelling: ``save_inference_model`` / ``load_inference_model``.

A model directory holds::

    __model__.json    the program (Program.to_json, with its op version map), pruned to what
                      the fetch targets need, plus "inference": {"feed": [...], "fetch": [...]}
    __params__.npz    the persistable variables the program reads (numpy, no pickle)
    __sample__.npz    optional: a sample feed ("feed/<name>"), the fetched results
                      ("fetch/<i>") and every intermediate output ("var/<name>")

Loading never runs code from the files: JSON is parsed with ``json``, arrays are read with
``numpy.load(..., allow_pickle=False)``.  A missing, malformed or truncated file is an
``InvalidArgument`` error naming the file and what is wrong.
"""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np

from opkit.framework import errors

__all__ = ["save_inference_model", "load_inference_model", "load_sample", "MODEL_FILE",
           "PARAMS_FILE", "SAMPLE_FILE", "is_model_dir", "ModelFileError", "read_model",
           "read_npz", "load_program", "intermediate_names"]

MODEL_FILE = "__model__.json"
PARAMS_FILE = "__params__.npz"
SAMPLE_FILE = "__sample__.npz"


def is_model_dir(path) -> bool:
    return (Path(path) / MODEL_FILE).is_file()


def _names(items, what: str) -> list[str]:
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple)):
        items = [items]
    out = []
    for item in items:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if not isinstance(name, str) or not name:
            raise errors.InvalidArgument("save_inference_model: %s must be variables or names, "
                                         "got %r", what, item)
        out.append(name)
    return out


def _prune(data: dict, feed: list[str], fetch: list[str]) -> None:
    """Keep the global block's ops that the fetch targets need (feeds cut the walk)."""
    ops = data["blocks"][0]["ops"]
    needed = set(fetch)
    keep = []
    for od in reversed(ops):
        outs = {n for names in od.get("outputs", {}).values() for n in names}
        if outs & needed:
            keep.append(od)
            needed |= {n for names in od.get("inputs", {}).values() for n in names} - set(feed)
    data["blocks"][0]["ops"] = list(reversed(keep))


def _persistable_inputs(program) -> list[str]:
    names = set()
    for block in program.blocks:
        for od in block.ops:
            for n in od.input_arg_names():
                v = block._find_var_recursive(n)
                if v is not None and v.persistable:
                    names.add(n)
    return sorted(names)


def _save_npz(path: Path, arrays: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def save_inference_model(dirname, feeded_var_names, target_vars, executor, main_program=None,
                         *, scope=None, sample_feed=None):
    """Save the part of ``main_program`` (default: the default main program) that computes
    ``target_vars`` from ``feeded_var_names``, with its parameters from ``scope`` (default:
    the global scope).  ``sample_feed`` (``{name: ndarray}``) runs the saved program once and
    stores the feed, the fetched results and every intermediate output with it.

    Returns the fetch target names."""
    from opkit.framework.program import Program, default_main_program
    from opkit.framework.scope import global_scope

    program = main_program if main_program is not None else default_main_program()
    scope = scope if scope is not None else global_scope()
    feed = _names(feeded_var_names, "feeded_var_names")
    fetch = _names(target_vars, "target_vars")
    data = json.loads(program.to_json())
    _prune(data, feed, fetch)
    pruned = Program.from_json(json.dumps(data))
    block = pruned.global_block()
    for name in feed + fetch:
        if not block.has_var(name):
            raise errors.NotFound("save_inference_model: variable '%s' is not in the program",
                                  name)
    params = {}
    for name in _persistable_inputs(pruned):
        var = scope.find_var(name)
        if var is None or not var.is_initialized():
            raise errors.NotFound("save_inference_model: parameter '%s' has no value in the "
                                  "scope (run the startup program first)", name)
        params[name] = np.asarray(var.get_tensor().numpy())
    out = Path(dirname)
    out.mkdir(parents=True, exist_ok=True)
    doc = json.loads(pruned.to_json())
    doc["inference"] = {"feed": feed, "fetch": fetch}
    (out / MODEL_FILE).write_text(json.dumps(doc, indent=1), encoding="utf-8")
    _save_npz(out / PARAMS_FILE, params)
    sample_path = out / SAMPLE_FILE
    if sample_feed is not None:
        _save_sample(pruned, feed, fetch, executor, scope, sample_feed, sample_path)
    elif sample_path.exists():
        sample_path.unlink()
    return fetch


def intermediate_names(program, fetch: list[str]) -> list[str]:
    """The outputs of the global block's ops, in op order, that a sample records."""
    block = program.global_block()
    names = []
    for od in block.ops:
        for n in od.output_arg_names():
            v = block._find_var_recursive(n)
            if (v is not None and not v.persistable and v.type == "lod_tensor"
                    and n not in names and n not in fetch):
                names.append(n)
    return names


def _save_sample(program, feed, fetch, executor, scope, sample_feed, path: Path) -> None:
    if not isinstance(sample_feed, dict) or set(sample_feed) != set(feed):
        raise errors.InvalidArgument("save_inference_model: sample_feed must map exactly the "
                                     "feeded variables %s to arrays, got %r", feed,
                                     sorted(sample_feed) if isinstance(sample_feed, dict)
                                     else sample_feed)
    for n, v in sample_feed.items():
        if isinstance(v, tuple) or np.asarray(v).dtype == object:
            raise errors.InvalidArgument("save_inference_model: sample_feed['%s'] must be an "
                                         "array (LoD feeds are not saved in samples)", n)
    inter = intermediate_names(program, fetch)
    values = executor.run(program, feed=dict(sample_feed), fetch_list=fetch + inter,
                          scope=scope.new_scope())
    arrays = {f"feed/{n}": np.asarray(sample_feed[n]) for n in feed}
    for i, v in enumerate(values[:len(fetch)]):
        arrays[f"fetch/{i}"] = np.asarray(v)
    for n, v in zip(inter, values[len(fetch):]):
        arrays[f"var/{n}"] = np.asarray(v)
    _save_npz(path, arrays)


# ---------------------------------------------------------------- loading

class ModelFileError(errors.InvalidArgument):
    """A model file is missing, malformed or truncated (the message names the file)."""


def _bad(path: Path, what: str):
    return ModelFileError("%s: %s", str(path), what)


def read_npz(path) -> dict:
    """Every array of an .npz file (no pickle); a clear error for a bad file."""
    path = Path(path)
    if not path.is_file():
        raise _bad(path, "no such file" if not path.exists() else "not a regular file")
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except zipfile.BadZipFile as exc:
        raise _bad(path, f"not a valid .npz archive (truncated or corrupt: {exc})") from None
    except ValueError as exc:   # object arrays refused, bad headers
        raise _bad(path, f"unreadable array ({exc})") from None
    except (OSError, EOFError, KeyError, zipfile.LargeZipFile) as exc:
        raise _bad(path, f"unreadable ({type(exc).__name__}: {exc})") from None


def read_model(dirname) -> dict:
    """The checked JSON document of a model directory's program (not upgraded)."""
    return _read_model(Path(dirname) / MODEL_FILE)


def _read_model(path: Path) -> dict:
    if not path.is_file():
        raise _bad(path, "no such file" if not path.exists() else "not a regular file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise _bad(path, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise _bad(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(path, f"not valid JSON: {exc.msg} at line {exc.lineno} column "
                         f"{exc.colno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("blocks"), list):
        raise _bad(path, "not a program: expected an object with a 'blocks' list")
    inf = data.get("inference")
    if (not isinstance(inf, dict) or not isinstance(inf.get("feed"), list)
            or not isinstance(inf.get("fetch"), list)
            or not all(isinstance(n, str) for n in inf["feed"] + inf["fetch"])):
        raise _bad(path, "missing or malformed 'inference' entry (expected "
                         "{\"feed\": [names], \"fetch\": [names]})")
    return data


def load_program(dirname):
    """``(program, feed_names, fetch_names)`` of a model directory (upgraders applied)."""
    from opkit.framework.program import Program

    path = Path(dirname) / MODEL_FILE
    data = _read_model(path)
    try:
        program = Program.from_json(json.dumps(data), where=str(path))
    except errors.EnforceNotMet:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise _bad(path, f"malformed program ({type(exc).__name__}: {exc})") from None
    return program, list(data["inference"]["feed"]), list(data["inference"]["fetch"])


def load_inference_model(dirname, executor, *, scope=None):
    """``(program, feed_names, fetch_targets)``; the parameters go into ``scope`` (default:
    the global scope).  ``fetch_targets`` are the program's variables."""
    from opkit.framework.scope import global_scope

    scope = scope if scope is not None else global_scope()
    program, feed, fetch = load_program(dirname)
    block = program.global_block()
    for name in feed + fetch:
        if not block.has_var(name):
            raise _bad(Path(dirname) / MODEL_FILE, f"variable '{name}' named in 'inference' is "
                                                   "not in the program")
    params_path = Path(dirname) / PARAMS_FILE
    params = read_npz(params_path)
    for name in _persistable_inputs(program):
        if name not in params:
            raise _bad(params_path, f"parameter '{name}' is missing")
        scope.var(name).get_tensor().set(params[name])
    return program, feed, [block.var(n) for n in fetch]


def load_sample(dirname) -> dict | None:
    """``{"feed": {name: arr}, "fetch": [arr, ...], "vars": {name: arr}}`` or None when the
    model was saved without a sample."""
    path = Path(dirname) / SAMPLE_FILE
    if not path.exists():
        return None
    arrays = read_npz(path)
    out = {"feed": {}, "fetch": [], "vars": {}}
    fetch = {}
    for key, value in arrays.items():
        kind, _, name = key.partition("/")
        if kind == "feed":
            out["feed"][name] = value
        elif kind == "var":
            out["vars"][name] = value
        elif kind == "fetch" and name.isdigit():
            fetch[int(name)] = value
        else:
            raise _bad(path, f"unexpected entry {key!r} (expected feed/NAME, fetch/I, var/NAME)")
    if sorted(fetch) != list(range(len(fetch))):
        raise _bad(path, f"fetch entries are not numbered 0..{len(fetch) - 1}")
    out["fetch"] = [fetch[i] for i in range(len(fetch))]
    return out
