"""Runs a kernel cannot tell apart from production (issue 48; docs/harness.md "Adversarial
kernels"): the helpers of the `indistinguishable` check. Input sets the op never saw (the
case's float values permuted and moved, one element changed), cotangents of production's
shapes (ones, a constant, one-hot, unbounded), one prepared op fed new values in the same
buffers, and the process conditions a kernel can read (`os.cpu_count()`, the thread
variables, the SIGALRM watchdog, the clocks, an address-space limit), each applied for one
run and put back.
"""
from __future__ import annotations

import contextlib
import os
import resource
import signal
import time

import numpy as np

from harness.backend.case import case_attrs
from harness.backend.seam import make, output_slots, place_object, run_forward_backward

__all__ = ["fresh_values", "one_changed", "cotangent", "special_cotangents", "runner",
           "CONDITIONS", "first_disagreement"]

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMEXPR_NUM_THREADS")


def fresh_values(specs: dict, rng) -> dict:
    """{slot: [VarSpec]} with every float array's values permuted and each moved by a random
    factor in [0.9, 1.1]: the case's shapes and magnitudes, bytes the op never saw."""
    out = {}
    for slot, items in specs.items():
        new = []
        for s in items:
            d = s.data
            if isinstance(d, np.ndarray) and d.dtype.kind == "f" and d.size:
                d = rng.permutation(d.reshape(-1)).reshape(d.shape) * \
                    rng.uniform(0.9, 1.1, d.shape)
                d = np.ascontiguousarray(d.astype(s.data.dtype))
            new.append(type(s)(s.name, d, s.lengths))
        out[slot] = new
    return out


def one_changed(specs: dict) -> dict:
    """The inputs with ONE element changed: the last element of the first float input
    takes another value of it (or +1 when all are equal)."""
    out, done = {}, False
    for slot, items in specs.items():
        new = []
        for s in items:
            d = s.data
            if not done and isinstance(d, np.ndarray) and d.dtype.kind == "f" and d.size:
                flat = d.reshape(-1).copy()
                other = flat[np.flatnonzero(flat != flat[-1])]
                flat[-1] = other[len(other) // 2] if other.size else flat[-1] + 1
                d, done = flat.reshape(d.shape), True
            new.append(type(s)(s.name, d, s.lengths))
        out[slot] = new
    return out


def cotangent(outs: dict, names, rng) -> dict:
    """A normal N(0, 1) cotangent per float output: small and large values, both signs."""
    return {n: rng.standard_normal(outs[n].shape).astype(outs[n].dtype) for n in names
            if outs.get(n) is not None and outs[n].dtype.kind == "f"}


def special_cotangents(outs: dict, names) -> list:
    """(what, cotangent) pairs of the shapes a production loss gives: all ones, a constant
    (a mean loss: 1/n), one-hot rows (a 1 at one index per row), one-hot rows of 0.37."""
    floats = {n: outs[n] for n in names if outs.get(n) is not None and outs[n].dtype.kind == "f"
              and outs[n].size > 1}
    if not floats:
        return []

    def onehot(v, value):
        c = np.zeros(v.shape, v.dtype)
        rows = c.reshape(-1, v.shape[-1]) if v.ndim else c.reshape(1, 1)
        rows[np.arange(rows.shape[0]), np.arange(rows.shape[0]) % rows.shape[1]] = value
        return c

    const = 1.0 / max(v.size for v in floats.values())
    return [("all ones", {n: np.ones_like(v) for n, v in floats.items()}),
            (f"the constant {const:.4g} (a mean loss)",
             {n: np.full_like(v, const) for n, v in floats.items()}),
            ("one-hot rows", {n: onehot(v, 1.0) for n, v in floats.items()}),
            ("one-hot rows of 0.37", {n: onehot(v, 0.37) for n, v in floats.items()})]


def runner(case, combo, bare, wrt):
    """run(specs, cot=None, backward=True, prepared=None) -> {name: array}: the op on those
    inputs (a new prepared op, or `prepared` reset to them), forward and backward with `cot`.
    `bare` is the case without its expected outputs: nothing the kernel can reach during a
    run on other inputs holds the answer for them."""
    slots = output_slots(case)
    attrs = case_attrs(case, combo.dtype)
    place = place_object(combo.place)

    def run(specs, cot=None, backward=True, prepared=None):
        if prepared is None:
            prepared = make(case.op_type, specs, attrs, slots, place)
        else:
            prepared.reset(specs)
        return run_forward_backward(prepared, bare, backward=backward and bool(wrt),
                                    wrt=wrt, cot=cot)
    return run


# -- the process conditions, each for one run ----------------------------------------------
@contextlib.contextmanager
def _cpu_count(n=3):
    saved_count = os.cpu_count
    saved_env = os.environ.copy()
    os.cpu_count = lambda: n
    os.environ.update({k: str(n) for k in THREAD_VARS})
    try:
        yield
    finally:
        os.cpu_count = saved_count
        for k in THREAD_VARS:
            if k in saved_env:
                os.environ[k] = saved_env[k]
            else:
                os.environ.pop(k, None)


@contextlib.contextmanager
def _no_watchdog():
    delay, interval = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        if delay > 0:
            signal.setitimer(signal.ITIMER_REAL, delay, interval)


@contextlib.contextmanager
def _slow_clocks(step=0.5):
    """Every clock read advances by `step` s: the run looks long (a big input, a slow
    machine)."""
    saved = {n: getattr(time, n) for n in ("perf_counter", "monotonic", "time")}
    ticks = [0]

    def clock(base):
        def read():
            ticks[0] += 1
            return base() + step * ticks[0]
        return read

    for n, f in saved.items():
        setattr(time, n, clock(f))
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(time, n, f)


@contextlib.contextmanager
def _memory_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = 2 ** 44 if hard == resource.RLIM_INFINITY else min(hard, 2 ** 44)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


CONDITIONS = [
    ("os.cpu_count() = 3 and OMP/OPENBLAS/MKL_NUM_THREADS = 3", _cpu_count),
    ("no SIGALRM watchdog armed", _no_watchdog),
    ("the clocks running 0.5 s per read (a long run)", _slow_clocks),
    ("an address-space limit (RLIMIT_AS 16 TiB)", _memory_limit),
]


def first_disagreement(want: dict, got: dict, dtype: str) -> str | None:
    """None when every array of `want` has its match in `got` (NaN-aware, the output
    tolerance of `dtype`), else 'Name[i, j]: a vs b'."""
    from harness.judging.compare import fmt_index, outside
    from harness.judging.tolerances import output_tolerance

    for name, w in want.items():
        g = got.get(name)
        if w is None or g is None:
            if (w is None) != (g is None):
                return f"'{name}': produced by one run only"
            continue
        w, g = np.asarray(w), np.asarray(g)
        if w.shape != g.shape:
            return f"'{name}': shape {list(w.shape)} vs {list(g.shape)}"
        if w.dtype.kind not in "fc":
            if not np.array_equal(w, g):
                k = int(np.flatnonzero(w.reshape(-1) != g.reshape(-1))[0])
                return (f"{fmt_index(name, np.unravel_index(k, w.shape))}: "
                        f"{w.reshape(-1)[k]!r} vs {g.reshape(-1)[k]!r}")
            continue
        atol, rtol = output_tolerance(dtype or w.dtype)
        a, b = w.astype(np.float64), g.astype(np.float64)
        bad = outside(b, a, atol, rtol)         # the output comparator's rule
        if bad.any():
            k = int(np.flatnonzero(bad.reshape(-1))[0])
            return (f"{fmt_index(name, np.unravel_index(k, w.shape))}: "
                    f"{a.reshape(-1)[k]!r} vs {b.reshape(-1)[k]!r} "
                    f"({int(bad.sum())} of {bad.size} elements differ)")
    return None
