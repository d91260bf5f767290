"""The cross-process half of `determinism`: a case's outputs and gradients in two FRESH
interpreters (harness.processes.fresh) with different `PYTHONHASHSEED` values must be bitwise identical
(a result that depends on set or dict order over names). One pair of children per run
(`start_batch`, opkit test) or per op (`cross_process`, the pytest items, cached per run):
docs/harness.md "`determinism` across processes".
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.backend import dispatch as backends
from harness.processes import fresh
from harness.backend.case import normalize_slots
from harness.judging.compare import fmt_index
from harness.backend.context import CheckContext, combos, first_difference
from harness.selecting.discovery import discover, instantiate, seed_all
from harness.options import HASHSEED_CHILD_ENV, current, flag, selected_dtypes, selected_places
from harness.reporting.report import FAIL, PASS, SKIP, CheckResult
from harness.checks.runs.siblings import run_case_results
from opkit.plugins import exec_op_file
from opkit.project import load_op_modules
from opkit.registry import all_op_types

__all__ = ["HASH_SEEDS", "cross_process", "child_main", "compare_case", "start_batch",
           "HashSeedBatch", "enabled"]

HASH_SEEDS = ("0", "1")     # two distinct explicit values
CHILD_TIMEOUT = 300         # seconds for one child


def _cache_dir() -> str:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    d = os.path.join(tempfile.gettempdir(), f"opkit-hashseed-{uid}")
    os.makedirs(d, exist_ok=True)
    old = time.time() - 6 * 3600           # entries of runs long finished
    for name in os.listdir(d):
        with contextlib.suppress(OSError):
            if os.stat(os.path.join(d, name)).st_mtime < old:
                os.remove(os.path.join(d, name))
    return d


def _stamp(path: str):
    with contextlib.suppress(OSError):
        st = os.stat(path)
        return [path, st.st_mtime_ns, st.st_size]
    return [path, None, None]


def _batch_key(request: dict) -> str:
    group = os.getpgrp() if hasattr(os, "getpgrp") else os.getpid()
    files = sorted({f for f, _ in request["classes"]} | set(request["op_files"]))
    text = json.dumps([group, sys.executable, HASH_SEEDS, request["op_type"],
                       request["seed"], request["classes"], request["combos"],
                       [_stamp(f) for f in files]], sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def _run_children(request: dict, folder: str, key: str):
    """Both children's {key: array} (cached per run), or ('fail', message): a HashSeedBatch
    of one request, the same protocol as the run's batch."""
    with contextlib.ExitStack() as held:
        with contextlib.suppress(ImportError, OSError):
            import fcntl

            lock = held.enter_context(open(os.path.join(folder, key + ".lock"), "w"))
            fcntl.flock(lock, fcntl.LOCK_EX)     # a sibling worker may be running the pair
        outs = [os.path.join(folder, f"{key}-hs{hs}.npz") for hs in HASH_SEEDS]
        if not all(os.path.isfile(out) for out in outs):
            batch = HashSeedBatch([request], tempfile.mkdtemp(prefix=key + "-", dir=folder))
            try:
                for k, out in enumerate(outs):
                    batch._finish(k)
                    if batch.problems[k]:
                        return "fail", next(iter(batch.problems[k].values()))
                    _save(out, batch._arrays(k))
            finally:
                batch.close()
        return [_load(out) for out in outs]


def _save(path: str, arrays: dict) -> None:
    """The arrays as the .npz `path`, whole or not at all (a reader never sees a part)."""
    tmp = path[:-len(".npz")] + ".part.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def _load(path: str) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def cross_process(case, combos, seed: int, grads=None, classes=None):
    """('skip', reason), ('fail', message) for a child that failed, or ('ran', {(place,
    dtype): None | what differs}) for the case over `combos` (Combo objects): the two
    children's arrays compared bitwise. `classes`: (test file, class name) of the op's
    OpTests (one pair of children for all); None: the case's own. `grads` is not used."""
    path, _, cls = (case.source or "").partition("::")
    if not path or not cls:
        return "skip", ("cannot rebuild the case in a fresh process: it has no OpTest source "
                        "file (made in code, not by an OpTest class)")
    own = [os.path.abspath(path), cls]
    if not os.path.isfile(own[0]):
        return "skip", f"cannot rebuild the case in a fresh process: no file {own[0]}"
    classes = sorted({tuple(c) for c in (classes or [])} | {tuple(own)})
    request = {"classes": [list(c) for c in classes], "op_type": case.op_type,
               "op_files": backends.kernel_files(case.op_type), "seed": int(seed),
               "combos": sorted([c.place, c.dtype] for c in combos)}
    got = _run_children(request, _cache_dir(), _batch_key(request))
    if isinstance(got, tuple):
        return got
    return compare_case(got[0], got[1], 0, request["classes"].index(own),
                        [(c.place, c.dtype) for c in combos])


def compare_case(a: dict, b: dict, op_index: int, class_index: int, combos) -> tuple:
    """('skip', reason) or ('ran', {(place, dtype): None | False | what differs}) for class
    `class_index` of request `op_index` in the two children's arrays (False: the op gave
    nothing for that combo in the children)."""
    index = f"{op_index}|{class_index}"
    missing = json.loads(str(a.get("__missing__", "{}")))
    if index in missing:
        return "skip", f"cannot rebuild the case in a fresh process: {missing[index]}"
    own = f"o{op_index}|c{class_index}|"
    a, b = ({k[len(own):]: v for k, v in d.items() if k.startswith(own)} for d in (a, b))
    for key in sorted(k for k in set(a) | set(b) if k.startswith("__input__|")):
        if _difference(key, a, b, key):
            return "skip", (f"the OpTest's setUp builds other inputs under another hash seed "
                            f"(input {key.split('|', 1)[1]} differs between PYTHONHASHSEED="
                            f"{HASH_SEEDS[0]} and {HASH_SEEDS[1]}; e.g. an RNG seeded with "
                            "hash() of a string): the kernels cannot be compared across "
                            "processes")
    verdicts = {}
    for place, dtype in combos:
        prefix = f"{place}/{dtype}|"
        keys = sorted(k for k in set(a) | set(b) if k.startswith(prefix))
        problems = (_difference(key[len(prefix):], a, b, key) for key in keys)
        # False: the op gave nothing in the children
        verdicts[(place, dtype)] = next(filter(None, problems), None) if keys else False
    return "ran", verdicts


def _difference(name: str, a: dict, b: dict, key: str) -> str | None:
    """How the children's arrays `key` (`name` in the message) differ; None: bitwise equal."""
    if key not in a or key not in b:
        return (f"{name} is produced only with PYTHONHASHSEED="
                f"{HASH_SEEDS[0] if key in a else HASH_SEEDS[1]}")
    diff = first_difference(a[key], b[key])
    if diff is None:
        return None
    if isinstance(diff, str):
        return (f"{name}: {diff} between fresh processes with PYTHONHASHSEED="
                f"{HASH_SEEDS[0]} and {HASH_SEEDS[1]}")
    idx, x, y, ulps = diff
    return (f"fresh processes with PYTHONHASHSEED={HASH_SEEDS[0]} and "
            f"PYTHONHASHSEED={HASH_SEEDS[1]} differ at {fmt_index(name, idx)}: "
            f"{x!r} vs {y!r} ({ulps} ULP) -- the result depends on the hash "
            "seed (set or dict order over names)")


def _import_file(path: str) -> None:
    folder = os.path.dirname(path)
    if folder not in sys.path:      # its sibling helpers
        sys.path.insert(0, folder)
    exec_op_file(Path(path))


def child_main(request: dict) -> None:
    """In the fresh process (harness.processes.fresh): `request` is {"requests": [...], "out_dir": ...,
    "start": k}. Ops k.. one after another; `progress` names the op under way (the parent
    restarts a child after an op that crashed or hung it), `o{j}.npz` holds op j's arrays."""
    with contextlib.suppress(Exception):    # the project's own ops; the op's files follow
        load_op_modules([])
    requests, out_dir = request["requests"], request["out_dir"]
    for j in range(int(request.get("start", 0)), len(requests)):
        with open(os.path.join(out_dir, "progress"), "w") as f:
            f.write(str(j))
        arrays, missing = {}, {}
        _run_request(j, requests[j], arrays, missing)
        arrays["__missing__"] = np.array(json.dumps(missing))
        _save(os.path.join(out_dir, f"o{j}.npz"), arrays)


def _run_request(j: int, req: dict, arrays: dict, missing: dict) -> None:
    if req["op_type"] not in all_op_types():
        for f in req["op_files"]:
            try:
                _import_file(f)
            except Exception as exc:  # noqa: BLE001
                for i in range(len(req["classes"])):
                    missing[f"{j}|{i}"] = f"importing {f} raised {type(exc).__name__}: {exc}"
                return

    found = {}
    for path in sorted({f for f, _ in req["classes"]}):
        for t in discover([path], seed=req["seed"]).tests:
            found.setdefault((path, t.name), t.cls)
    for i, (path, name) in enumerate(req["classes"]):
        cls = found.get((path, name))
        if cls is None:
            missing[f"{j}|{i}"] = f"class {name} not found in {path}"
            continue
        try:
            case = instantiate(cls, req["seed"]).to_case()
        except Exception as exc:  # noqa: BLE001
            missing[f"{j}|{i}"] = f"setUp of {name} raised {type(exc).__name__}: {exc}"
            continue
        proto = backends.proto(case.op_type)
        seed_attr = proto.attr("seed") if proto is not None else None
        if seed_attr is not None and not (case.attrs or {}).get("seed", seed_attr.default):
            missing[f"{j}|{i}"] = ("a random op without a fixed seed (seed 0 draws a fresh "
                                   "seed each run)")
            continue
        specs_all = [s for specs in normalize_slots(case.inputs).values() for s in specs]
        floats = [s.name for s in specs_all
                  if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f"]
        for s in specs_all:            # the inputs setUp built: they must agree too
            if isinstance(s.data, np.ndarray) and s.data.dtype != object:
                arrays[f"o{j}|c{i}|__input__|{s.name}"] = np.ascontiguousarray(s.data)
        wanted = req.get("combos")
        if wanted is None:
            ctx = CheckContext(seed=req["seed"], places=tuple(req.get("places") or ()) or None,
                               dtypes=tuple(req.get("dtypes") or ()) or None)
            wanted = [[c.place, c.dtype] for c in combos(case, ctx, "determinism")[0]]
        for place, dtype in wanted:
            seed_all(req["seed"])
            res = run_case_results(case, place, dtype, req["seed"], grads=floats)
            if not res and floats:          # some input has no gradient: outputs only
                seed_all(req["seed"])
                res = run_case_results(case, place, dtype, req["seed"], grads=[])
            for out_name, v in res.items():
                if v is not None and v.dtype != object:
                    arrays[f"o{j}|c{i}|{place}/{dtype}|{out_name}"] = np.ascontiguousarray(v)


# -- one pair of children per run (opkit test) -------------------------------------------------
def enabled() -> bool:
    """The cross-process comparison runs unless OPKIT_HASH_SEEDS=0 (harness.options), and
    never inside one of its own children."""
    return not flag(HASHSEED_CHILD_ENV) and current().hash_seeds


class HashSeedBatch:
    """Both children of a run, started in the background, one .npz per op each; a child
    that dies on an op or spends more than `op_timeout` seconds on one is replaced by one
    starting at the next op. `results()` compares them."""

    def __init__(self, requests: list, folder: str, op_timeout: float | None = None):
        self.requests = requests
        self.folder = folder
        self.op_timeout = op_timeout or CHILD_TIMEOUT
        self.dirs = [os.path.join(folder, f"hs{hs}") for hs in HASH_SEEDS]
        self.problems = [{} for _ in HASH_SEEDS]    # op index -> why it has no arrays
        for d in self.dirs:
            os.makedirs(d, exist_ok=True)
        self.procs = [self._start(k, 0) for k in range(len(HASH_SEEDS))]

    def _start(self, k: int, start: int):
        with contextlib.suppress(OSError):
            os.remove(os.path.join(self.dirs[k], "progress"))
        # a file, not a pipe, for its standard error: a chatty child never blocks on it
        with open(os.path.join(self.dirs[k], "stderr"), "a") as errfile:
            return fresh.start("harness.checks.runs.hashseed:child_main",
                               {"requests": self.requests, "out_dir": self.dirs[k],
                                "start": start},
                               hash_seed=HASH_SEEDS[k], env={HASHSEED_CHILD_ENV: "1"},
                               stderr=errfile)

    def _progress(self, k: int):
        """(op index under way, since when) of child k, or (None, None)."""
        path = os.path.join(self.dirs[k], "progress")
        try:
            with open(path) as f:
                return int(f.read().strip() or -1), os.stat(path).st_mtime
        except (OSError, ValueError):
            return None, None

    def _stderr_tail(self, k: int) -> str:
        lines = []
        with contextlib.suppress(OSError), open(os.path.join(self.dirs[k], "stderr")) as f:
            lines = f.read().strip().splitlines()
        return lines[-1] if lines else "no output"

    def _finish(self, k: int) -> None:
        """Wait for child k, replacing it after an op that kills or hangs it."""
        started_at = time.time()
        while True:
            proc = self.procs[k]
            code = proc.poll()
            j, since = self._progress(k)
            if code == 0:
                return
            if code is not None:                       # died
                if j is None or j >= len(self.requests) or \
                        os.path.isfile(os.path.join(self.dirs[k], f"o{j}.npz")):
                    # died before starting an op (or after finishing one): give up on the rest
                    return self._give_up(k, f"failed: {self._stderr_tail(k)}")
                why = f"died running this op (exit status {code})"
            elif time.time() - (started_at if j is None else since) > self.op_timeout:
                proc.kill()
                proc.wait()
                if j is None:
                    return self._give_up(k, "did not start")
                why = f"did not finish this op in {self.op_timeout:g} s"
            else:
                time.sleep(0.05)
                continue
            self.problems[k][j] = f"the fresh process with PYTHONHASHSEED={HASH_SEEDS[k]} {why}"
            if j + 1 >= len(self.requests):
                return
            self.procs[k] = self._start(k, j + 1)
            started_at = time.time()

    def _give_up(self, k: int, why: str) -> None:
        """Child k gives no more results: every op it did not finish has none (an op whose
        arrays it wrote before it died is finished, not failed)."""
        for i in range(len(self.requests)):
            if os.path.isfile(os.path.join(self.dirs[k], f"o{i}.npz")):
                continue
            self.problems[k].setdefault(i, f"the fresh process with "
                                           f"PYTHONHASHSEED={HASH_SEEDS[k]} {why}")

    def _arrays(self, k: int) -> dict:
        got, missing = {}, {}
        for j in range(len(self.requests)):
            path = os.path.join(self.dirs[k], f"o{j}.npz")
            if os.path.isfile(path):
                arrays = _load(path)
                missing.update(json.loads(str(arrays.pop("__missing__", "{}"))))
                got.update(arrays)
        for j, why in self.problems[k].items():
            for i in range(len(self.requests[j]["classes"])):
                missing.setdefault(f"{j}|{i}", why)
        got["__missing__"] = np.array(json.dumps(missing))
        return got

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def results(self, reports) -> dict:
        """{op: [CheckResult]} for the ops of `reports` (harness.executing.pool.OpReport), one result
        per case x combo whose in-process `determinism` passed."""
        try:
            for k in range(len(HASH_SEEDS)):
                self._finish(k)
            got = [self._arrays(k) for k in range(len(HASH_SEEDS))]
        finally:
            self.close()
        by_op = {r.op: r for r in reports}
        out: dict = {}
        for j, request in enumerate(self.requests):
            rep = by_op.get(request["op_type"])
            if rep is None:
                continue
            steady = {(r.case, r.place, r.dtype) for r in rep.results
                      if r.check == "determinism" and r.status == PASS}
            failed = {(r.case, r.place, r.dtype) for r in rep.results
                      if r.check == "determinism" and r.status == FAIL}
            mine = out.setdefault(request["op_type"], [])
            for i, (_, name) in enumerate(request["classes"]):
                ran = [(p, d) for (c, p, d) in steady - failed if c == name]
                if not ran:
                    continue
                why = [json.loads(str(g["__missing__"])).get(f"{j}|{i}") for g in got]
                dead = [w for w in why if w and w.startswith("the fresh process")]
                if dead:
                    mine.extend(CheckResult("determinism", FAIL, p, d, name, dead[0])
                                for p, d in sorted(ran))
                    continue
                status, verdicts = compare_case(got[0], got[1], j, i, ran)
                if status == "skip":
                    mine.append(CheckResult("determinism", SKIP, "", "", name,
                                            f"across processes: {verdicts}"))
                    continue
                for (p, d), problem in sorted(verdicts.items()):
                    if problem is False:
                        status, message = SKIP, ("across processes: the op gave no result in "
                                                 "the fresh processes")
                    elif problem:
                        status, message = FAIL, problem
                    else:
                        status, message = PASS, ("bitwise identical in fresh processes with "
                                                 f"PYTHONHASHSEED={HASH_SEEDS[0]} and "
                                                 f"{HASH_SEEDS[1]}")
                    mine.append(CheckResult("determinism", status, p, d, name, message))
        return out


def start_batch(ops, by_op: dict, seed: int,
                op_timeout: float | None = None) -> HashSeedBatch | None:
    """Start the run's pair of children for `ops` (by_op: op -> [DiscoveredTest]); None when
    the comparison is off or nothing can be rebuilt in a fresh process."""
    if not enabled():
        return None
    places, dtypes = list(selected_places()), list(selected_dtypes())
    requests = []
    for op in ops:
        classes = sorted({(os.path.abspath(t.path), t.name) for t in by_op.get(op) or ()
                          if not t.error and t.path and os.path.isfile(t.path)})
        if classes:
            requests.append({"classes": [list(c) for c in classes], "op_type": op,
                             "op_files": backends.kernel_files(op), "seed": int(seed),
                             "places": places, "dtypes": dtypes})
    if not requests:
        return None
    return HashSeedBatch(requests, tempfile.mkdtemp(prefix="opkit-hashseed-"), op_timeout)
