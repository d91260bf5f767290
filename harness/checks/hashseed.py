"""The cross-process half of `determinism`: a case's outputs and gradients in two FRESH
Python processes started with different `PYTHONHASHSEED` values must be bitwise identical.

Bug class: results that depend on the iteration order of a set or dict over names (variable
names, attr names, slot names): e.g. a kernel that sums the inputs of a duplicable slot in
`set(names)` order. Inside one process (and in a forked child, which inherits the hash
seed) the order is stable, so repeated runs agree; another process can add in another order
and get other bits.

How: each child (`python -c ...` with `PYTHONHASHSEED` set) loads the built-in ops and the
files that registered the op's kernels, imports the OpTest's file, rebuilds the case from its
class (same seed), runs forward and backward for every runnable place x dtype of the case in
one go and writes the arrays to an .npz in a temporary folder. One pair of children per case
(all its dtypes and places batched), not one per combo.
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


def cross_process(case, combos, seed: int, grads):
    """('skip', reason), ('fail', message) for a child that failed, or ('ran', {(place,
    dtype): None | what differs}) for the case over `combos` (Combo objects): the two
    children's arrays compared bitwise."""
    where = _test_file(case)
    if where is None:
        return "skip", ("cannot rebuild the case in a fresh process: it has no OpTest source "
                        "file (made in code, not by an OpTest class)")
    if not os.path.isfile(where[0]):
        return "skip", f"cannot rebuild the case in a fresh process: no file {where[0]}"
    request = {"test_file": where[0], "cls": where[1], "op_type": case.op_type,
               "op_files": _op_files(case.op_type), "seed": int(seed),
               "grads": list(grads or []),
               "combos": [[c.place, c.dtype] for c in combos]}
    results = []
    with tempfile.TemporaryDirectory(prefix="opkit-hashseed-") as tmp:
        for hs in HASH_SEEDS:
            out = os.path.join(tmp, f"hs{hs}.npz")
            env = dict(os.environ, PYTHONHASHSEED=hs, OPKIT_HASHSEED_CHILD="1")
            try:
                p = subprocess.run(
                    [sys.executable, "-c",
                     "from harness.checks.hashseed import child_main; child_main()"],
                    input=json.dumps(dict(request, out=out)), env=env, cwd=os.getcwd(),
                    capture_output=True, text=True, timeout=CHILD_TIMEOUT)
            except subprocess.TimeoutExpired:
                return "fail", (f"the fresh process with PYTHONHASHSEED={hs} did not finish "
                                f"in {CHILD_TIMEOUT} s")
            if p.returncode == 3:        # the child says the case cannot be rebuilt there
                return "skip", ("cannot rebuild the case in a fresh process: "
                                + (p.stdout.strip().splitlines() or ["?"])[-1])
            if p.returncode != 0 or not os.path.isfile(out):
                tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
                return "fail", (f"the fresh process with PYTHONHASHSEED={hs} failed: {tail}")
            with np.load(out, allow_pickle=False) as z:
                results.append({k: z[k] for k in z.files})
    a, b = results
    from harness.checks._support import first_difference, fmt_index

    verdicts = {}
    for c in combos:
        prefix = f"{c.place}/{c.dtype}|"
        keys = sorted(k for k in set(a) | set(b) if k.startswith(prefix))
        problem = None
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

    found = [t for t in discover([req["test_file"]], seed=req["seed"]).tests
             if t.name == req["cls"]]
    if not found:
        print(f"class {req['cls']} not found in {req['test_file']}")
        sys.exit(3)
    try:
        case = instantiate(found[0].cls, req["seed"]).to_case()
    except Exception as exc:  # noqa: BLE001
        print(f"setUp of {req['cls']} raised {type(exc).__name__}: {exc}")
        sys.exit(3)
    arrays = {}
    for place, dtype in req["combos"]:
        seed_all(req["seed"])
        res = run_case_results(case, place, dtype, req["seed"], grads=req["grads"])
        for name, v in res.items():
            if v is not None and v.dtype != object:
                arrays[f"{place}/{dtype}|{name}"] = np.ascontiguousarray(v)
    np.savez(req["out"], **arrays)
