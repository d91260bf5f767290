"""`opkit bench`: per-op forward and backward time, and side-by-side comparison with a ref.

Cases come from the op's OpTests: each case's inputs are scaled up along their first
(batch) dimension until the largest input holds at least `elements` values (default
65,536), so that the time measured is the kernel's and not the framework's fixed cost. A
case whose scaled inputs the op refuses is timed at its written size (the table says so).

Timing (`time_cases`): one `PreparedOp` per case, a warm-up run, then `repeats` batches of
calls each lasting at least `min_batch_s`; a phase's time is the median per-call time of
its batches. Backward times the grad ops alone (the forward has run). The table's times are
wall-clock; a comparison's batches are timed by the worker's CPU time by default (`CLOCKS`):
on a loaded machine the wall time of a batch includes whatever other processes ran while it
did (measured on the shared 2-core container at load 4-5, niced: wall time 4x the CPU time,
and the log of consecutive batches' ratio had a spread of 0.36 by wall clock, 0.055 by CPU
time).

Comparison (`compare`): rounds of two fresh worker processes, this side and the ref side,
pinned to one CPU (rotating over the CPUs from round to round), which time the same batches
in turn (the side going first alternates). The figure of an op in a round is the median over
its cases, phases and batch pairs of log(this side's time / the ref's); the estimate is the
geometric mean over rounds, and its interval the wider of a Student-t interval and a
percentile bootstrap over rounds. An op is *slower* when the whole interval lies above
1 + threshold.

Rounds are sequential (`sequential`, `looks`): the verdict is first looked at after `rounds`
rounds, and an op whose interval straddles 1 + threshold gets more rounds, looked at again
after every further `rounds` rounds, up to `max_rounds`; an op whose interval lies wholly on
one side at a look is decided there. Looking K times gives a slowdown that is not there K
chances to be called: each look's interval is a (1 - (1 - confidence) / K) interval
(Bonferroni), so the chance that any look wrongly says *slower* stays at most
(1 - confidence) / 2 whatever the looks' dependence (a union bound over the K looks).
"""
from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from harness.options import DEFAULT_SEED
from harness.judging.stats import (DEFAULT_CONFIDENCE, bootstrap_interval, interval,  # noqa: F401
                           t_interval, t_quantile)
from pathlib import Path

import numpy as np

__all__ = ["BenchCase", "Side", "DEFAULT_ELEMENTS", "DEFAULT_THRESHOLD", "DEFAULT_ROUNDS",
           "DEFAULT_MAX_ROUNDS_FACTOR", "DEFAULT_CLOCK", "CLOCKS",
           "derive_cases", "scale_case", "time_cases", "compare", "bootstrap_interval",
           "t_interval", "t_quantile", "interval", "looks", "look_confidence", "sequential",
           "prepare_calls", "calibrate", "time_batch",
           "OpComparison"]

DEFAULT_ELEMENTS = 65536
DEFAULT_THRESHOLD = 0.05
DEFAULT_ROUNDS = 10
DEFAULT_MAX_ROUNDS_FACTOR = 3     # --max-rounds defaults to 3 x --rounds


@dataclass
class BenchCase:
    """One timed configuration: an OpTest case's inputs (scaled) and attrs."""

    op_type: str
    name: str                       # "TestClass" (the OpTest it comes from)
    inputs: dict                    # Paddle's OpTest format
    attrs: dict
    wrt: list = field(default_factory=list)   # float inputs whose gradients backward gives
    scale: int = 1                  # the factor the first dimension was multiplied by
    note: str = ""                  # why it was not scaled, when it was not

    def shapes(self) -> str:
        from harness.backend.case import normalize_slots

        parts = []
        for slot, specs in normalize_slots(self.inputs).items():
            for s in specs:
                if isinstance(s.data, np.ndarray):
                    parts.append(f"{slot}{list(s.data.shape)}")
        return " ".join(parts)


# -- cases ------------------------------------------------------------------------------------
def _largest(specs) -> int:
    sizes = [s.data.size for items in specs.values() for s in items
             if isinstance(s.data, np.ndarray)]
    return max(sizes, default=0)


def _tiled(spec, k: int):
    from harness.backend.case import as_value

    data = spec.data
    if spec.lengths:   # k copies of every sequence; the data follows
        tiled = np.concatenate([data] * k, axis=0)
        lengths = [list(level) * k for level in spec.lengths]
        return (tiled, lengths)
    return as_value(spec, np.concatenate([data] * k, axis=0))


def _runs(case: BenchCase) -> bool:
    from harness.backend.seam import make
    from harness.backend.case import normalize_slots

    try:
        op = make(case.op_type, normalize_slots(case.inputs), case.attrs)
        op.forward()
        return True
    except Exception:  # noqa: BLE001 - the op refuses these inputs: try the next scaling
        return False


def scale_case(case: BenchCase, elements: int = DEFAULT_ELEMENTS) -> BenchCase:
    """`case` with its batch dimension multiplied until the largest input holds at least
    `elements` values: first every input whose first dimension equals the largest input's,
    then the largest input alone; the case as written when the op refuses both."""
    from harness.backend.case import map_inputs, normalize_slots

    specs = normalize_slots(case.inputs)
    largest = _largest(specs)
    if largest == 0 or largest >= elements:
        return case
    k = math.ceil(elements / largest)
    arrays = [s for items in specs.values() for s in items
              if isinstance(s.data, np.ndarray) and s.data.ndim >= 1]
    if not arrays:
        return case
    big = max(arrays, key=lambda s: s.data.size)
    same_batch = {s.name for s in arrays if s.data.shape[0] == big.data.shape[0]}
    groups = [same_batch] + ([{big.name}] if same_batch != {big.name} else [])
    for names in groups:
        inputs = map_inputs(case.inputs, lambda s, names=names: _tiled(s, k)
                            if s.name in names else _as_is(s))
        scaled = BenchCase(case.op_type, case.name, inputs, case.attrs, case.wrt, k)
        if _runs(scaled):
            return scaled
    return BenchCase(case.op_type, case.name, case.inputs, case.attrs, case.wrt, 1,
                     "the op refuses its inputs scaled along the first dimension")


def _as_is(spec):
    from harness.backend.case import as_value

    return as_value(spec)


def derive_cases(op_type: str, tests, seed: int = DEFAULT_SEED, elements: int = DEFAULT_ELEMENTS,
                 max_cases: int = 2) -> list[BenchCase]:
    """Up to `max_cases` scaled cases of `op_type` from its discovered OpTests (the first
    ones whose setUp runs and whose op runs)."""
    from harness.selecting.discovery import instantiate
    from harness.backend.case import case_from_test
    from harness.backend.case import normalize_slots

    out: list[BenchCase] = []
    for t in tests:
        if len(out) >= max_cases:
            break
        try:
            case = case_from_test(instantiate(t.cls, seed), t.source)
        except Exception:  # noqa: BLE001 - a broken setUp is `opkit test`'s business
            continue
        wrt = list(case.grad_inputs) or [
            s.name for slot, items in normalize_slots(case.inputs).items() for s in items
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f"]
        bench = BenchCase(case.op_type, case.name, case.inputs, dict(case.attrs), wrt)
        if _largest(normalize_slots(case.inputs)) < 2 or not _runs(bench):
            continue   # an empty or 0-D case times the framework, not the kernel
        out.append(scale_case(bench, elements))
    return out


# -- timing -----------------------------------------------------------------------------------
def prepare_calls(cases: list[BenchCase]) -> dict:
    """{(case index, "forward" | "backward"): a no-argument call running that phase once},
    each run once already (backward only where the op has a usable grad op)."""
    from harness.backend.seam import make, make_cotangents
    from harness.backend.case import normalize_slots
    from opkit.framework.registry import op_info

    calls = {}
    for i, case in enumerate(cases):
        op = make(case.op_type, normalize_slots(case.inputs), case.attrs)
        outputs = op.forward()
        calls[(i, "forward")] = op.forward
        if case.wrt and op_info(case.op_type).grad_maker is not None:
            cot = make_cotangents(outputs, list(outputs))

            def backward(op=op, cot=cot, wrt=case.wrt):
                return op.backward(cot, wrt)
            try:
                backward()
            except Exception:  # noqa: BLE001 - no usable grad op for this case
                continue
            calls[(i, "backward")] = backward
    return calls


# what a batch's seconds are: "wall" the elapsed time, "cpu" this process's CPU time (all its
# threads; time the CPU spends on other processes is not counted, so load does not enter)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
DEFAULT_CLOCK = "cpu"


def time_batch(fn, n: int, clock=time.perf_counter) -> float:
    """Seconds (of `clock`) that `n` calls of `fn` take."""
    start = clock()
    for _ in range(n):
        fn()
    return clock() - start


def calibrate(fn, min_batch_s: float, clock=time.perf_counter) -> int:
    """The number of calls of `fn` that last at least `min_batch_s` (of `clock`)."""
    fn()
    n = 1
    while True:
        elapsed = time_batch(fn, n, clock)
        if elapsed >= min_batch_s or n >= 1 << 20:
            return n
        n = max(n * 2, int(n * min_batch_s / max(elapsed, 1e-9) * 1.2))


def time_cases(cases: list[BenchCase], repeats: int = 5,
               min_batch_s: float = 0.02) -> list[dict]:
    """[{"op", "case", "forward_s", "backward_s" (None without a gradient)}, ...]: the
    median per-call time of `repeats` batches per phase."""
    calls = prepare_calls(cases)
    rows = []
    for i, case in enumerate(cases):
        row = {"op": case.op_type, "case": case.name, "forward_s": None, "backward_s": None}
        for phase in ("forward", "backward"):
            fn = calls.get((i, phase))
            if fn is not None:
                n = calibrate(fn, min_batch_s)
                row[f"{phase}_s"] = float(np.median([time_batch(fn, n) / n
                                                     for _ in range(repeats)]))
        rows.append(row)
    return rows


# -- comparison -------------------------------------------------------------------------------
@dataclass
class Side:
    """Where one side's op code comes from, for a worker process."""

    label: str
    cwd: str                              # the worker's folder (its pyproject.toml is read)
    ops: list = field(default_factory=list)          # --ops entries
    path_prefix: list = field(default_factory=list)  # put first on sys.path after start-up
    project: bool = True            # load the `[tool.opkit] ops` of the pyproject in cwd
    builtins: bool = True           # load every built-in op up front (else on demand)


_WORKER_MAIN = ("import sys; del sys.path[0]; import opkit.cli.bench_worker as w; "
                "sys.exit(w.main(sys.argv[1:]))")


class _Worker:
    """A fresh worker process of one side (opkit.cli.bench_worker), driven line by line."""

    def __init__(self, side: Side, cases_file: str, min_batch_s: float,
                 clock: str = DEFAULT_CLOCK):
        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(k, "1")
        spec = json.dumps({"ops": side.ops, "path_prefix": side.path_prefix,
                           "project": side.project, "builtins": side.builtins,
                           "cases": cases_file, "min_batch_s": min_batch_s,
                           "clock": clock, "parent": os.getpid()})
        self.side = side
        # not `-m`: that would import the worker from the side's folder (a ref's tree)
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER_MAIN, spec],
                                     cwd=side.cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)

    def ready(self) -> set:
        line = self.proc.stdout.readline()
        if not line.startswith("ready "):
            self.close()
            err = self.proc.stderr.read().strip().splitlines()
            raise RuntimeError(f"the {self.side.label} side's worker failed: "
                               f"{err[-1] if err else line.strip() or '(no output)'}")
        return {(i, p) for i, p in json.loads(line[6:])}

    def ask(self, text: str) -> str:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _pin(workers, cpu) -> None:
    """Both workers on one CPU (they never run at once: each batch sees that CPU's load)."""
    if cpu is None:
        return
    for w in workers:
        try:
            os.sched_setaffinity(w.proc.pid, {cpu})
        except OSError:
            return


def _round(cases, this: Side, ref: Side, cases_file: str, repeats: int,
           min_batch_s: float, ref_first: bool, cpu=None,
           clock: str = DEFAULT_CLOCK) -> dict[str, float]:
    """One round: both sides' fresh workers time the same batches, interleaved pairwise, on
    one CPU; op -> median log(this / ref) over its cases, phases and batch pairs."""
    a = _Worker(this, cases_file, min_batch_s, clock)
    b = _Worker(ref, cases_file, min_batch_s, clock)
    _pin((a, b), cpu)
    try:
        phases = sorted(a.ready() & b.ready())
        logs: dict[str, list[float]] = {}
        for i, phase in phases:
            n = int(a.ask(f"calibrate {i} {phase}"))
            b.ask(f"calibrate {i} {phase}")         # the same warm-up on both sides
            for j in range(repeats):
                first, second = (b, a) if (j % 2 == 0) == ref_first else (a, b)
                t_first = float(first.ask(f"time {i} {phase} {n}"))
                t_second = float(second.ask(f"time {i} {phase} {n}"))
                t_a, t_b = (t_first, t_second) if first is a else (t_second, t_first)
                logs.setdefault(cases[i].op_type, []).append(math.log(t_a / t_b))
        # the median pair: one batch that a burst of load hit does not move the round
        return {op: float(np.median(v)) for op, v in logs.items()}
    finally:
        a.close()
        b.close()


def looks(rounds: int, max_rounds: int) -> list[int]:
    """The round counts at which the verdict is looked at: `rounds`, then every further
    `rounds` rounds, and `max_rounds` last (10, 30 -> [10, 20, 30]; 10, 25 -> [10, 20, 25])."""
    if rounds < 1 or max_rounds < rounds:
        raise ValueError(f"looks({rounds}, {max_rounds}): need 1 <= rounds <= max_rounds")
    out = list(range(rounds, max_rounds + 1, rounds))
    return out if out[-1] == max_rounds else out + [max_rounds]


def look_confidence(confidence: float, n_looks: int) -> float:
    """Each look's interval confidence when there are `n_looks` looks (Bonferroni): the
    chance that any look's interval misses the true ratio is at most 1 - confidence."""
    return 1.0 - (1.0 - confidence) / n_looks


@dataclass
class OpComparison:
    op: str
    ratio: float          # this side's time / the ref's (> 1: slower)
    low: float
    high: float
    rounds: int           # the rounds the verdict was made on
    slower: bool          # the whole interval lies above 1 + threshold
    per_round: list = field(default_factory=list)   # each round's ratio (this / ref)
    confidence: float = DEFAULT_CONFIDENCE          # the interval's (per look)

    def to_json(self) -> dict:
        return {"op": self.op, "ratio": round(self.ratio, 4), "low": round(self.low, 4),
                "high": round(self.high, 4), "rounds": self.rounds, "slower": self.slower,
                "confidence": round(self.confidence, 5),
                "per_round": [round(float(np.exp(v)), 4) for v in self.per_round]}


def sequential(next_round, rounds: int = DEFAULT_ROUNDS, max_rounds: int | None = None,
               threshold: float = DEFAULT_THRESHOLD, confidence: float = DEFAULT_CONFIDENCE,
               progress=None) -> list[OpComparison]:
    """The sequential verdict. `next_round(r)` runs round r (0-based) and returns
    {op: log(this / ref)}. At each of `looks(rounds, max_rounds)` an op not yet decided is
    decided when its interval (at `look_confidence(confidence, len(looks))`) lies wholly
    above 1 + threshold (slower) or wholly below it (not slower), or when it is the last
    look; rounds stop once every op is decided. `progress(done, planned)` after each round
    (`planned`: the round count of the next look)."""
    max_rounds = rounds * DEFAULT_MAX_ROUNDS_FACTOR if max_rounds is None else max_rounds
    marks = looks(rounds, max_rounds)
    level = look_confidence(confidence, len(marks))
    bound = math.log1p(threshold)
    per_op: dict[str, list[float]] = {}
    decided: dict[str, OpComparison] = {}
    done = 0
    for mark in marks:
        while done < mark:
            for op, value in next_round(done).items():
                per_op.setdefault(op, []).append(value)
            done += 1
            if progress:
                progress(done, mark)
        for op, logs in per_op.items():
            if op in decided:
                continue
            ratio, low, high = interval(logs, level)
            straddles = math.log(low) <= bound < math.log(high)
            if not straddles or mark == marks[-1]:
                decided[op] = OpComparison(op, ratio, low, high, len(logs),
                                           math.log(low) > bound, list(logs), level)
        if len(decided) == len(per_op):
            break
    return [decided[op] for op in per_op]


def compare(cases: list[BenchCase], this: Side, ref: Side, rounds: int = DEFAULT_ROUNDS,
            threshold: float = DEFAULT_THRESHOLD, repeats: int = 4,
            confidence: float = DEFAULT_CONFIDENCE, min_batch_s: float = 0.02,
            progress=None, max_rounds: int | None = None,
            clock: str = DEFAULT_CLOCK) -> list[OpComparison]:
    """Time `cases` on both sides, rounds of two fresh worker processes whose batches
    alternate (at least `rounds`, at most `max_rounds`, default 3 x `rounds`: see
    `sequential`), each batch by `clock` (a CLOCKS key); one OpComparison per op."""
    if clock not in CLOCKS:
        raise ValueError(f"clock {clock!r}: one of {sorted(CLOCKS)}")
    with tempfile.NamedTemporaryFile("wb", suffix=".pkl", delete=False) as f:
        pickle.dump(cases, f)
        cases_file = f.name
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []

    def next_round(r: int) -> dict[str, float]:
        cpu = cpus[r % len(cpus)] if cpus else None     # rounds rotate over the CPUs
        return _round(cases, this, ref, cases_file, repeats, min_batch_s,
                      ref_first=r % 2 == 1, cpu=cpu, clock=clock)
    try:
        return sequential(next_round, rounds, max_rounds, threshold, confidence, progress)
    finally:
        Path(cases_file).unlink(missing_ok=True)
