"""The scaling part of law 4 (`trace`, OPKIT_LAWS_DEEP=1 only): time and peak memory grow
with the input size as the op declares (OpTest knob `opkit_complexity`, linear unless set).
The method: docs/harness.md, the `trace` row and the paragraphs under the table. Time is
`opkit bench`'s noise-aware method reimplemented small (harness must not import opkit.cli).
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import time
import tracemalloc

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import as_value, case_inputs, map_inputs, normalize_slots
from harness.checks.laws.shared import float_inputs
from harness.backend.seam import make, make_cotangents
from harness.judging.stats import interval

__all__ = ["COMPLEXITIES", "MIN_ELEMENTS", "ROUNDS", "scaling_problem"]

#: declared complexity -> the bound on t(4N)/t(N) and peak(4N)/peak(N): 1.5x the ideal
#: ratio (4, 4 log(4N)/log(N) at N = 2^14, 16, 64), room for noise and cache effects
COMPLEXITIES = {"linear": 6.0, "n log n": 7.0, "quadratic": 24.0, "cubic": 96.0}
MIN_ELEMENTS = 1 << 16
ROUNDS = 7
MIN_BATCH_S = 0.004
CONFIDENCE = 0.95
SIZES = (1, 2, 4)


def scaling_problem(case, combo) -> tuple[str | None, str]:
    """(failure message or None, note): the note says what was measured, or why not."""
    opts = case.options or {}
    declared = str(opts.get("complexity", "linear"))
    bound = COMPLEXITIES.get(declared.lower())
    if bound is None:
        return (f"opkit_complexity = {opts.get('complexity')!r} is not one of "
                f"{sorted(COMPLEXITIES)}", "")
    grown = _grown_cases(case, combo)
    if isinstance(grown, str):
        return None, f"scaling not measured: {grown}"
    ops, name, rows = grown
    msgs, notes = [], []
    for phase, calls in _phases(ops, case).items():
        with _steady_allocator():
            est, low, high, per = _ratio(calls)
        times = ", ".join(f"t({'' if k == 1 else k}N) = {t * 1e6:.1f} us"
                          for k, t in zip(SIZES, per))
        notes.append(f"{phase} t(4N)/t(N) = {est:.2f} [{low:.2f}, {high:.2f}]")
        steps = (per[1] / per[0], per[2] / per[1])
        # both doublings superlinear: a jump in one alone is a cache or allocator threshold
        # crossed between two sizes (a linear op's t(4N)/t(N) reached 20 on one), not growth
        if low > bound and min(steps) > math.sqrt(bound):
            msgs.append(f"{phase} time grows faster than {declared}: {times}; t(4N)/t(N) = "
                        f"{est:.2f} (95% interval [{low:.2f}, {high:.2f}], {ROUNDS} interleaved "
                        f"rounds, CPU time) lies above {bound:g}, and each doubling is above "
                        f"{math.sqrt(bound):.2f} (x{steps[0]:.2f}, x{steps[1]:.2f})")
    peaks = [_peak(ops[k][0]) for k in (1, 4)]
    floor = int(ops[1][1][name].nbytes)
    ratio = peaks[1] / max(peaks[0], floor, 1)
    notes.append(f"peak memory {peaks[0]} -> {peaks[1]} bytes")
    if ratio > bound:
        msgs.append(f"peak memory grows faster than {declared}: a forward run's tracemalloc "
                    f"peak is {peaks[0]} bytes at N and {peaks[1]} bytes at 4N (x{ratio:.1f}, "
                    f"bound {bound:g})")
    where = f"{name} grown along its leading axis to {rows}, {2 * rows}, {4 * rows} rows"
    if msgs:
        return f"{'; '.join(msgs)} ({where})", ""
    return None, f"scales as {declared} ({where}: {'; '.join(notes)})"


def _grown_cases(case, combo):
    """{1: ops, 2: ops, 4: ops} each (prepared op, {name: grown array}), the grown input's
    name and N's rows; or a reason string when growing is not possible."""
    specs = case_inputs(case, combo.dtype)
    first = next((s for s in float_inputs(specs).values() if s.data.ndim >= 1), None)
    if first is None:
        return "no float input with a leading axis"
    if first.lengths:
        return f"{first.name} carries a LoD (its sequences fix the rows)"
    if first.data.size == 0:
        return f"{first.name} is empty"
    rows0 = first.data.shape[0]
    k = max(1, math.ceil(MIN_ELEMENTS / first.data.size))
    by_name = {s.name: s for ss in specs.values() for s in ss}   # cast to the combo's dtype
    together = {s.name for s in by_name.values() if isinstance(s.data, np.ndarray)
                and s.data.ndim >= 1 and not s.lengths and s.data.shape[0] == rows0}
    groups = [together] + ([{first.name}] if together != {first.name} else [])
    for names in groups:
        ops = {}
        for mult in SIZES:
            def grow(s, names=names, reps=k * mult):
                s = by_name[s.name]
                return as_value(s, np.concatenate([s.data] * reps)) if s.name in names \
                    else as_value(s)
            made = _made(case, map_inputs(case.inputs, grow))
            if made is None:
                break
            ops[mult] = made
        if len(ops) == len(SIZES):
            return ops, first.name, rows0 * k
    return (f"the op refuses {first.name} grown along its leading axis (an attr or another "
            "input fixes its shape)")


def _made(case, inputs):
    """(prepared op, {input name: array}) after one forward run, or None when it raises."""
    slots = normalize_slots(inputs)
    try:
        op = make(case.op_type, slots, case.attrs)
        op.forward()
    except Exception:  # noqa: BLE001 - the op refuses the grown inputs
        return None
    return op, {s.name: s.data for ss in slots.values() for s in ss
                if isinstance(s.data, np.ndarray)}


def _phases(ops, case) -> dict:
    """{"forward": {mult: call}, "backward": {mult: call}} (backward where it runs)."""
    out = {"forward": {m: op.forward for m, (op, _) in ops.items()}}
    if backends.declared().has_grad(case.op_type):
        with contextlib.suppress(Exception):    # no usable grad op for this case
            out["backward"] = {m: _backward(op, arrays, case) for m, (op, arrays) in ops.items()}
    return out


def _backward(op, arrays, case):
    """The op's backward call (run once here) for a cotangent on every output."""
    wrt = list(case.grad_inputs) or [n for n, a in arrays.items() if a.dtype.kind == "f"]
    outs = op.forward()
    call = functools.partial(op.backward, make_cotangents(outs, list(outs)), wrt)
    call()
    return call


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3     # glibc's mallopt parameters
GLIBC_DEFAULT = 128 * 1024


@contextlib.contextmanager
def _steady_allocator():
    """glibc's malloc, while timing, keeps freed memory (no mmap per large array, no trim;
    docs/harness.md says why). Put back to glibc's default values afterwards (the dynamic
    threshold then stays off); a no-op elsewhere."""
    try:
        libc = ctypes.CDLL(None)
        ok = bool(libc.mallopt(M_MMAP_THRESHOLD, 1 << 30)
                  and libc.mallopt(M_TRIM_THRESHOLD, 1 << 30))
    except (OSError, AttributeError):
        ok = False
    try:
        yield
    finally:
        if ok:
            libc.mallopt(M_MMAP_THRESHOLD, GLIBC_DEFAULT)
            libc.mallopt(M_TRIM_THRESHOLD, GLIBC_DEFAULT)
            getattr(libc, "malloc_trim", lambda _: 0)(0)


def _batch(fn, n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        fn()
    return time.process_time() - start


def _calibrate(fn) -> int:
    n = 1
    while True:
        elapsed = _batch(fn, n)
        if elapsed >= MIN_BATCH_S or n >= 1 << 16:
            return n
        n = max(n * 2, int(n * MIN_BATCH_S / max(elapsed, 1e-9) * 1.2))


def _ratio(calls: dict):
    """(estimate, low, high, [median per-call seconds at N, 2N, 4N]) of t(4N)/t(N) over
    ROUNDS rounds of interleaved batches."""
    counts = {m: _calibrate(fn) for m, fn in calls.items()}
    logs, per = [], {m: [] for m in calls}
    for r in range(ROUNDS):
        for m in SIZES[r % 3:] + SIZES[:r % 3]:      # the order rotates
            per[m].append(max(_batch(calls[m], counts[m]) / counts[m], 1e-9))
        logs.append(math.log(per[4][-1] / per[1][-1]))
    est, low, high = interval(logs, CONFIDENCE)
    return est, low, high, [float(np.median(per[m])) for m in SIZES]


def _peak(op) -> int:
    """tracemalloc's peak (bytes) over one forward run, above what was traced before it."""
    was = tracemalloc.is_tracing()
    if not was:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        op.forward()
        return max(tracemalloc.get_traced_memory()[1] - base, 0)
    finally:
        if not was:
            tracemalloc.stop()
