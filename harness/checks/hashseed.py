"""The cross-process half of `determinism`: a case's outputs and gradients in two FRESH
Python processes started with different `PYTHONHASHSEED` values must be bitwise identical.

Bug class: results that depend on the iteration order of a set or dict over names (variable
names, attr names, slot names): e.g. a kernel that sums the inputs of a duplicable slot in
`set(names)` order. Inside one process (and in a forked child, which inherits the hash
seed) the order is stable, so repeated runs agree; another process can add in another order
and get other bits.

How: each child (`python -c ...` with `PYTHONHASHSEED` set) loads the built-in ops and the
files that registered the op's kernels, imports the OpTest files, rebuilds every OpTest case
of the op from its class (same seed), runs forward and backward (gradients of every float
input; outputs only when that raises) for every place x dtype in one go and writes the
arrays to an .npz. One pair of children per op, not per case: the first case of the op
that gets here runs the pair and leaves the two .npz files in a cache folder keyed by the
run (process group), the op, the seed, the combos and the files (with their mtimes); the
op's other cases (in other forked workers of the same run) read them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

__all__ = ["HASH_SEEDS", "cross_process", "child_main"]

HASH_SEEDS = ("0", "1")     # two distinct explicit values
CHILD_TIMEOUT = 300         # seconds for one child


def _op_files(op_type: str) -> list[str]:
    """The source files that registered kernels of op_type (and of its grad op types)."""
    import inspect

    from opkit.registry import kernels_of

    files = []
    for t in (op_type, op_type + "_grad"):
        for entry in kernels_of(t).values():
            f = None
            try:
                f = inspect.getsourcefile(entry.fn)
            except TypeError:
                pass
            if f is None and entry.where:
                f = entry.where.rsplit(":", 1)[0]
            if f and os.path.isfile(f) and f not in files:
                files.append(os.path.abspath(f))
    return files


def _test_file(case) -> tuple[str, str] | None:
    src = (case.source or "")
    path, _, cls = src.partition("::")
    if not path or not cls:
        return None
    return os.path.abspath(path), cls


def _cache_dir() -> str:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    d = os.path.join(tempfile.gettempdir(), f"opkit-hashseed-{uid}")
    os.makedirs(d, exist_ok=True)
    import time

    old = time.time() - 6 * 3600           # entries of runs long finished
    for name in os.listdir(d):
        try:
            if os.stat(os.path.join(d, name)).st_mtime < old:
                os.remove(os.path.join(d, name))
        except OSError:
            pass
    return d


def _stamp(path: str):
    try:
        st = os.stat(path)
        return [path, st.st_mtime_ns, st.st_size]
    except OSError:
        return [path, None, None]


def _batch_key(request: dict) -> str:
    import hashlib

    group = os.getpgrp() if hasattr(os, "getpgrp") else os.getpid()
    files = sorted({f for f, _ in request["classes"]} | set(request["op_files"]))
    text = json.dumps([group, sys.executable, HASH_SEEDS, request["op_type"],
                       request["seed"], request["classes"], request["combos"],
                       [_stamp(f) for f in files]], sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def _run_children(request: dict, folder: str, key: str):
    """Both children's {key: array} (from the cache when this run already made them), or
    ('skip'|'fail', message)."""
    lock = None
    try:
        import fcntl

        lock = open(os.path.join(folder, key + ".lock"), "w")
        fcntl.flock(lock, fcntl.LOCK_EX)     # a sibling worker may be running the pair
    except (ImportError, OSError):
        lock = None
    try:
        outs = [os.path.join(folder, f"{key}-hs{hs}.npz") for hs in HASH_SEEDS]
        for hs, out in zip(HASH_SEEDS, outs):
            if os.path.isfile(out):
                continue
            env = dict(os.environ, PYTHONHASHSEED=hs, OPKIT_HASHSEED_CHILD="1")
            tmp = out + ".part.npz"
            try:
                p = subprocess.run(
                    [sys.executable, "-c",
                     "from harness.checks.hashseed import child_main; child_main()"],
                    input=json.dumps(dict(request, out=tmp)), env=env, cwd=os.getcwd(),
                    capture_output=True, text=True, timeout=CHILD_TIMEOUT)
            except subprocess.TimeoutExpired:
                return "fail", (f"the fresh process with PYTHONHASHSEED={hs} did not finish "
                                f"in {CHILD_TIMEOUT} s")
            if p.returncode != 0 or not os.path.isfile(tmp):
                tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
                return "fail", f"the fresh process with PYTHONHASHSEED={hs} failed: {tail}"
            os.replace(tmp, out)
        results = []
        for out in outs:
            with np.load(out, allow_pickle=False) as z:
                results.append({k: z[k] for k in z.files})
        return results
    finally:
        if lock is not None:
            lock.close()


def cross_process(case, combos, seed: int, grads=None, classes=None):
    """('skip', reason), ('fail', message) for a child that failed, or ('ran', {(place,
    dtype): None | what differs}) for the case over `combos` (Combo objects): the two
    children's arrays compared bitwise. `classes`: (test file, class name) of every OpTest
    of the op (batched in one pair of children); None: the case's own class only. `grads`
    is not used (the children differentiate every float input)."""
    where = _test_file(case)
    if where is None:
        return "skip", ("cannot rebuild the case in a fresh process: it has no OpTest source "
                        "file (made in code, not by an OpTest class)")
    if not os.path.isfile(where[0]):
        return "skip", f"cannot rebuild the case in a fresh process: no file {where[0]}"
    own = [where[0], where[1]]
    classes = sorted({tuple(c) for c in (classes or [])} | {tuple(own)})
    request = {"classes": [list(c) for c in classes], "op_type": case.op_type,
               "op_files": _op_files(case.op_type), "seed": int(seed),
               "combos": sorted([c.place, c.dtype] for c in combos)}
    got = _run_children(request, _cache_dir(), _batch_key(request))
    if isinstance(got, tuple):
        return got
    a, b = got
    index = str(request["classes"].index(own))
    missing = json.loads(str(a.get("__missing__", "{}")))
    if index in missing:
        return "skip", f"cannot rebuild the case in a fresh process: {missing[index]}"
    own_prefix = f"c{index}|"
    a = {k[len(own_prefix):]: v for k, v in a.items() if k.startswith(own_prefix)}
    b = {k[len(own_prefix):]: v for k, v in b.items() if k.startswith(own_prefix)}
    from harness.checks._support import first_difference, fmt_index

    for key in sorted(k for k in set(a) | set(b) if k.startswith("__input__|")):
        if key not in a or key not in b or first_difference(a[key], b[key]) is not None:
            return "skip", (f"the OpTest's setUp builds other inputs under another hash seed "
                            f"(input {key.split('|', 1)[1]} differs between PYTHONHASHSEED="
                            f"{HASH_SEEDS[0]} and {HASH_SEEDS[1]}; e.g. an RNG seeded with "
                            "hash() of a string): the kernels cannot be compared across "
                            "processes")
    verdicts = {}
    for c in combos:
        prefix = f"{c.place}/{c.dtype}|"
        keys = sorted(k for k in set(a) | set(b) if k.startswith(prefix))
        problem = None if keys else False     # False: the op gave nothing in the children
        for key in keys:
            name = key[len(prefix):]
            if key not in a or key not in b:
                problem = (f"{name} is produced only with PYTHONHASHSEED="
                           f"{HASH_SEEDS[0] if key in a else HASH_SEEDS[1]}")
                break
            diff = first_difference(a[key], b[key])
            if diff is None:
                continue
            if isinstance(diff, str):
                problem = (f"{name}: {diff} between fresh processes with PYTHONHASHSEED="
                           f"{HASH_SEEDS[0]} and {HASH_SEEDS[1]}")
            else:
                idx, x, y, ulps = diff
                problem = (f"fresh processes with PYTHONHASHSEED={HASH_SEEDS[0]} and "
                           f"PYTHONHASHSEED={HASH_SEEDS[1]} differ at {fmt_index(name, idx)}: "
                           f"{x!r} vs {y!r} ({ulps} ULP) -- the result depends on the hash "
                           "seed (set or dict order over names)")
            break
        verdicts[(c.place, c.dtype)] = problem
    return "ran", verdicts


def _import_file(path: str) -> None:
    import importlib.util

    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "opkit_hashseed_ops." + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def child_main() -> None:
    """Run in the fresh process: read the request (JSON on stdin), write the .npz."""
    req = json.loads(sys.stdin.read())
    from opkit.project import load_op_modules
    from opkit.registry import all_op_types

    try:
        load_op_modules([])
    except Exception:  # noqa: BLE001 - the project's own ops; the op's files follow
        pass
    if req["op_type"] not in all_op_types():
        for f in req["op_files"]:
            _import_file(f)
    from harness.checks.siblings import run_case_results
    from harness.discovery import discover, instantiate, seed_all
    from harness.runner import normalize_slots

    found = {}
    for path in sorted({f for f, _ in req["classes"]}):
        for t in discover([path], seed=req["seed"]).tests:
            found.setdefault((path, t.name), t.cls)
    arrays, missing = {}, {}
    for i, (path, name) in enumerate(req["classes"]):
        cls = found.get((path, name))
        if cls is None:
            missing[str(i)] = f"class {name} not found in {path}"
            continue
        try:
            case = instantiate(cls, req["seed"]).to_case()
        except Exception as exc:  # noqa: BLE001
            missing[str(i)] = f"setUp of {name} raised {type(exc).__name__}: {exc}"
            continue
        specs_all = [s for specs in normalize_slots(case.inputs).values() for s in specs]
        floats = [s.name for s in specs_all
                  if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f"]
        for s in specs_all:            # the inputs setUp built: they must agree too
            if isinstance(s.data, np.ndarray) and s.data.dtype != object:
                arrays[f"c{i}|__input__|{s.name}"] = np.ascontiguousarray(s.data)
        for place, dtype in req["combos"]:
            seed_all(req["seed"])
            res = run_case_results(case, place, dtype, req["seed"], grads=floats)
            if not res and floats:          # some input has no gradient: outputs only
                seed_all(req["seed"])
                res = run_case_results(case, place, dtype, req["seed"], grads=[])
            for out_name, v in res.items():
                if v is not None and v.dtype != object:
                    arrays[f"c{i}|{place}/{dtype}|{out_name}"] = np.ascontiguousarray(v)
    arrays["__missing__"] = np.array(json.dumps(missing))
    np.savez(req["out"], **arrays)
