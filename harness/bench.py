"""`opkit bench`: per-op forward and backward time, and side-by-side comparison with a ref.

Cases come from the op's OpTests: each case's inputs are scaled up along their first
(batch) dimension until the largest input holds at least `elements` values (default
65,536), so that the time measured is the kernel's and not the framework's fixed cost. A
case whose scaled inputs the op refuses is timed at its written size (the table says so).

Timing (`time_cases`): one `PreparedOp` per case, a warm-up run, then `repeats` batches of
calls each lasting at least `min_batch_s`; a phase's time is the median per-call time of
its batches. Backward times the grad ops alone (the forward has run).

Comparison (`compare`): `rounds` rounds; each round starts two fresh worker processes,
this side and the ref side, pinned to one CPU (rotating over the CPUs from round to round),
which time the same batches in turn (the side going first alternates). The figure of an
op in a round is the median over its cases, phases and batch pairs of log(this side's time
/ the ref's); the estimate is the geometric mean over rounds, and its interval the wider of
a 95% Student-t interval and a percentile bootstrap over rounds. An op is *slower* when
the whole interval lies above 1 + threshold.
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
from pathlib import Path

import numpy as np

__all__ = ["BenchCase", "Side", "DEFAULT_ELEMENTS", "DEFAULT_THRESHOLD", "DEFAULT_ROUNDS",
           "derive_cases", "scale_case", "time_cases", "compare", "bootstrap_interval",
           "t_interval", "interval",
           "prepare_calls", "calibrate", "time_batch",
           "OpComparison"]

DEFAULT_ELEMENTS = 65536
DEFAULT_THRESHOLD = 0.05
DEFAULT_ROUNDS = 10
DEFAULT_CONFIDENCE = 0.95


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
        from harness.runner import normalize_slots

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
    from harness.runner import as_value

    data = spec.data
    if spec.lengths:   # k copies of every sequence; the data follows
        tiled = np.concatenate([data] * k, axis=0)
        lengths = [list(level) * k for level in spec.lengths]
        return (tiled, lengths)
    return as_value(spec, np.concatenate([data] * k, axis=0))


def _runs(case: BenchCase) -> bool:
    from harness.runner import PreparedOp, normalize_slots

    try:
        op = PreparedOp(case.op_type, normalize_slots(case.inputs), case.attrs)
        op.forward()
        return True
    except Exception:  # noqa: BLE001 - the op refuses these inputs: try the next scaling
        return False


def scale_case(case: BenchCase, elements: int = DEFAULT_ELEMENTS) -> BenchCase:
    """`case` with its batch dimension multiplied until the largest input holds at least
    `elements` values: first every input whose first dimension equals the largest input's,
    then the largest input alone; the case as written when the op refuses both."""
    from harness.runner import map_inputs, normalize_slots

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
    from harness.runner import as_value

    return as_value(spec)


def derive_cases(op_type: str, tests, seed: int = 2024, elements: int = DEFAULT_ELEMENTS,
                 max_cases: int = 2) -> list[BenchCase]:
    """Up to `max_cases` scaled cases of `op_type` from its discovered OpTests (the first
    ones whose setUp runs and whose op runs)."""
    from harness.discovery import instantiate
    from harness.case import case_from_test
    from harness.runner import normalize_slots

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
    from harness.runner import PreparedOp, make_cotangents, normalize_slots
    from opkit.framework.registry import op_info

    calls = {}
    for i, case in enumerate(cases):
        op = PreparedOp(case.op_type, normalize_slots(case.inputs), case.attrs)
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


def time_batch(fn, n: int) -> float:
    """Seconds that `n` calls of `fn` take."""
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return time.perf_counter() - start


def calibrate(fn, min_batch_s: float) -> int:
    """The number of calls of `fn` that last at least `min_batch_s`."""
    fn()
    n = 1
    while True:
        elapsed = time_batch(fn, n)
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


_WORKER_MAIN = ("import sys; del sys.path[0]; import harness.bench_worker as w; "
                "sys.exit(w.main(sys.argv[1:]))")


class _Worker:
    """A fresh worker process of one side (harness.bench_worker), driven line by line."""

    def __init__(self, side: Side, cases_file: str, min_batch_s: float):
        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(k, "1")
        spec = json.dumps({"ops": side.ops, "path_prefix": side.path_prefix,
                           "project": side.project, "builtins": side.builtins,
                           "cases": cases_file, "min_batch_s": min_batch_s})
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
           min_batch_s: float, ref_first: bool, cpu=None) -> dict[str, float]:
    """One round: both sides' fresh workers time the same batches, interleaved pairwise, on
    one CPU; op -> median log(this / ref) over its cases, phases and batch pairs."""
    a, b = _Worker(this, cases_file, min_batch_s), _Worker(ref, cases_file, min_batch_s)
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


# two-sided 95% quantiles of Student's t by degrees of freedom (1..30); 1.96 beyond
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t_interval(logs: list[float]) -> tuple[float, float, float]:
    """(estimate, low, high) of exp(mean(logs)) with a 95% Student-t interval over the
    rounds (each round's log ratio is one observation)."""
    values = np.asarray(logs, dtype=float)
    estimate = float(np.exp(values.mean()))
    if values.size < 2:
        return estimate, estimate, estimate
    df = values.size - 1
    t = _T975[df - 1] if df <= len(_T975) else 1.96
    half = t * values.std(ddof=1) / math.sqrt(values.size)
    return estimate, float(np.exp(values.mean() - half)), float(np.exp(values.mean() + half))


def bootstrap_interval(logs: list[float], confidence: float = DEFAULT_CONFIDENCE,
                       resamples: int = 4000, seed: int = 0) -> tuple[float, float, float]:
    """(estimate, low, high) of exp(mean(logs)): a percentile bootstrap over the rounds."""
    values = np.asarray(logs, dtype=float)
    estimate = float(np.exp(values.mean()))
    if values.size < 2:
        return estimate, estimate, estimate
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, (resamples, values.size))].mean(axis=1)
    alpha = (1.0 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return estimate, float(np.exp(low)), float(np.exp(high))


def interval(logs: list[float]) -> tuple[float, float, float]:
    """The verdict's interval: the wider of the Student-t and the bootstrap intervals (with
    ten rounds a percentile bootstrap alone is too narrow: 3 false alarms in 100 A/A runs
    on a loaded machine)."""
    est, t_low, t_high = t_interval(logs)
    _, b_low, b_high = bootstrap_interval(logs)
    return est, min(t_low, b_low), max(t_high, b_high)


@dataclass
class OpComparison:
    op: str
    ratio: float          # this side's time / the ref's (> 1: slower)
    low: float
    high: float
    rounds: int
    slower: bool          # the whole interval lies above 1 + threshold

    def to_json(self) -> dict:
        return {"op": self.op, "ratio": round(self.ratio, 4), "low": round(self.low, 4),
                "high": round(self.high, 4), "rounds": self.rounds, "slower": self.slower}


def compare(cases: list[BenchCase], this: Side, ref: Side, rounds: int = DEFAULT_ROUNDS,
            threshold: float = DEFAULT_THRESHOLD, repeats: int = 4,
            confidence: float = DEFAULT_CONFIDENCE, min_batch_s: float = 0.02,
            progress=None) -> list[OpComparison]:
    """Time `cases` on both sides, `rounds` rounds of two fresh worker processes whose
    batches alternate; one OpComparison per op."""
    with tempfile.NamedTemporaryFile("wb", suffix=".pkl", delete=False) as f:
        pickle.dump(cases, f)
        cases_file = f.name
    per_op: dict[str, list[float]] = {}
    try:
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        for r in range(rounds):
            cpu = cpus[r % len(cpus)] if cpus else None     # rounds rotate over the CPUs
            for op, value in _round(cases, this, ref, cases_file, repeats, min_batch_s,
                                    ref_first=r % 2 == 1, cpu=cpu).items():
                per_op.setdefault(op, []).append(value)
            if progress:
                progress(r + 1, rounds)
    finally:
        Path(cases_file).unlink(missing_ok=True)
    out = []
    for op, logs in per_op.items():
        ratio, low, high = interval(logs)
        out.append(OpComparison(op, ratio, low, high, len(logs), low > 1.0 + threshold))
    return out
