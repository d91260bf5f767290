"""`indistinguishable`: a kernel must not be able to tell it is being tested (issue 48).

Once per op, CPU float64 (else the kernel's dtype): input sets of the case's shapes -- the
case's own, two never seen before (values permuted and moved), the case's with one element
changed -- each run first at a fresh address (the baseline), then again under every
condition a test run differs from production in: the same buffers refilled in place (the
address and the array object of another set), well past any small call count (60 calls,
the sets interleaved), another thread, a forked process, `os.cpu_count()` and the thread
variables changed, no SIGALRM watchdog, clocks that say the run is long, an address-space
limit. Every run must give its set's baseline (the output tolerances), the case's last runs
the test's expected outputs, and the fresh sets `reference()`'s outputs, computed after the
kernel ran (nothing the kernel can reach holds them during the run). The gradient must be
linear in the cotangent: for all-ones, a constant, one-hot rows and scaled one-hot rows,
g(c) = g(r) + g(c - r) with a random r (a fast path for the cotangents a test or a loss
gives is wrong elsewhere). A failure names the two runs that disagree and both values.
"""
from __future__ import annotations

import os
import pickle
import threading
from dataclasses import replace

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import as_value, case_attrs, case_inputs, map_inputs, normalize_slots
from harness.checks.base import Check, Mismatch
from harness.inputs import production as P
from harness.checks.laws.shared import ReferenceRaised, compare_to_reference, reference
from harness.checks.modes import one_cpu_combo
from harness.judging.compare import fmt_index
from harness.reporting.error_text import first_line
from harness.backend.seam import (grad_outputs, grad_wrt, has_grad, make, op_refused, output_slots,
                        place_object, run_forward_backward)

CALLS = 60          # calls past which the sets are judged again
LINEAR_UNITS = 1024  # g(c) vs g(r) + g(c - r): eps32 x (|terms| + the array's largest)


def _is_random(case) -> bool:
    proto = backends.proto(case.op_type)
    return proto is not None and proto.attr("seed") is not None


def _arrays_only(specs) -> bool:
    return all(isinstance(s.data, np.ndarray) for ss in specs.values() for s in ss)


def _refill(prepared, held: dict, specs) -> None:
    """Write `specs`' values into the arrays `held` ({name: array} a prepared op was fed:
    the same address, the same array object) and feed those same arrays again (a backend
    that copies its inputs on set_input sees the new values; one that keeps the array, as
    opkit's does, keeps its address)."""
    for ss in specs.values():
        for s in ss:
            a = held.get(s.name)
            if isinstance(a, np.ndarray) and a.shape == s.data.shape:
                np.copyto(a, s.data)
                prepared.set_input(s.name, a, s.lod or None)


class IndistinguishableCheck(Check):
    name = "indistinguishable"
    description = ("results independent of what a test run differs from production in: "
                   "addresses, seen inputs, call counts, cotangents, threads, processes, "
                   "CPU count, time and memory budgets")
    order = 196
    scope = "op"
    needs_float = True

    def applies(self, case, context):
        if _is_random(case):
            return "a random op (attr seed): its runs differ by design"
        if not _arrays_only(case_inputs(case, "")):
            return "an input is not an array (SelectedRows, LoDTensorArray)"
        return None

    def verdict(self, derived, context):
        skips: list = []
        runnable, _ = self.plan(derived, context, skips)
        combos = one_cpu_combo(runnable)
        if not combos:
            return skips or [self.skipped(derived.base, "no CPU kernel")]
        combo = combos[0]
        try:
            problem, note = self._judge(derived.case, combo, context)
        except Exception as exc:  # noqa: BLE001 - the plain run raised: others report it
            if op_refused(exc):
                return [self.skipped(derived.base, f"the op refuses the case: {exc}", combo)]
            return [self.skipped(derived.base, f"the plain run raised: {type(exc).__name__}: "
                                 f"{first_line(str(exc))}", combo)]
        if problem is None:
            return [self.passed(derived, combo, note)]
        return [self.failed(derived, combo, problem, kind=Mismatch)]

    # -- the runs ---------------------------------------------------------------------------
    def _judge(self, case, combo, context):
        rng = np.random.default_rng([int(getattr(context, "seed", 0) or 0), 48])
        base_specs = case_inputs(case, combo.dtype)
        probe = make(case.op_type, base_specs, case_attrs(case, combo.dtype),
                     output_slots(case), place_object(combo.place))
        wrt = grad_wrt(case, probe) if has_grad(case.op_type) else []
        bare = replace(case, outputs={}, reference=None)
        run = P.runner(case, combo, bare, wrt)
        first = run(base_specs, backward=False)
        names = [n for n in grad_outputs(case, first) if first.get(n) is not None and
                 first[n].dtype.kind == "f"]
        if not names:
            wrt = []
            run = P.runner(case, combo, bare, wrt)

        # the one-changed set right after the case's own: a cache that looks at part of
        # the input (a sample, the first row) returns the case's result for it
        sets = [("the case's inputs", base_specs),
                ("the case's inputs with one element changed", P.one_changed(base_specs)),
                ("new values 1 (the case's permuted and moved)", P.fresh_values(base_specs, rng)),
                ("new values 2", P.fresh_values(base_specs, rng))]
        cots = [P.cotangent(first, names, rng) if wrt else None for _ in sets]

        def copy(specs):
            return {slot: [type(s)(s.name, s.data.copy(), s.lengths) for s in ss]
                    for slot, ss in specs.items()}

        # the baselines: each set once, fresh buffers; a set the op refuses is left out
        base, kept = {}, []
        for k, (_what, specs) in enumerate(sets):
            try:
                base[k] = run(copy(specs), cots[k])
            except Exception as exc:  # noqa: BLE001
                if k == 0:
                    raise
                if not op_refused(exc):
                    base[k] = exc
                continue
            kept.append(k)
        again = run(copy(sets[0][1]), cots[0])
        diff = P.first_disagreement(base[0], again, combo.dtype)
        if diff:
            return (f"{sets[0][0]}: a second run (after {len(sets)} runs) gave another result "
                    f"than the first: {diff} (first run vs second run)"), ""
        for k, b in list(base.items()):
            if isinstance(b, BaseException):
                return (f"the op raised on {sets[k][0]} where it ran on the case's: "
                        f"{type(b).__name__}: {b}"), ""

        def judge(k, got, how):
            diff = P.first_disagreement(base[k], got, combo.dtype)
            if diff:
                return (f"{sets[k][0]}: {how} gave another result than their first run "
                        f"(fresh buffers): {diff} (first run vs {how})")
            return None

        # 1. one prepared op, the next set's values written into the same buffers
        prepared = make(case.op_type, copy(sets[kept[0]][1]), case_attrs(case, combo.dtype),
                        output_slots(case), place_object(combo.place))
        held = {s.name: s.data for ss in prepared.inputs.values() for s in ss}
        for k in kept:
            _refill(prepared, held, sets[k][1])
            got = run_forward_backward(prepared, bare, backward=bool(wrt), wrt=wrt, cot=cots[k])
            for n in list(got):
                got[n] = None if got[n] is None else got[n].copy()
            problem = judge(k, got, "the same input buffers refilled in place (one address, "
                                    "one array object for every set)")
            if problem:
                return problem, ""
        # 2. call counts well past a small N: the sets interleaved, forward only
        for i in range(CALLS):
            run(copy(sets[kept[i % len(kept)]][1]), backward=False)
        for k in kept:
            problem = judge(k, run(copy(sets[k][1]), cots[k]),
                            f"a run after {CALLS} more calls")
            if problem:
                return problem, ""
        # 3. another thread
        box: dict = {}

        def work():
            try:
                box["got"] = run(copy(sets[kept[-1]][1]), cots[kept[-1]])
            except Exception as exc:  # noqa: BLE001
                box["got"] = exc
        t = threading.Thread(target=work)
        t.start()
        t.join()
        if isinstance(box.get("got"), BaseException):
            return f"a run in another thread raised {type(box['got']).__name__}: {box['got']}", ""
        problem = judge(kept[-1], box["got"], "a run in another thread")
        if problem:
            return problem, ""
        # 4. the process conditions
        for what, condition in P.CONDITIONS:
            for k in (kept[0], kept[-1]):
                with condition():
                    got = run(copy(sets[k][1]), cots[k])
                problem = judge(k, got, f"a run with {what}")
                if problem:
                    return problem, ""
        # 5. another process (forked)
        got = _forked(lambda: run(copy(sets[kept[1 % len(kept)]][1]), cots[kept[1 % len(kept)]]))
        if isinstance(got, str):
            return f"a run in a forked process failed: {got}", ""
        if got is not None:
            problem = judge(kept[1 % len(kept)], got, "a run in a forked process")
            if problem:
                return problem, ""
        # 6. against the test's answers, now that the kernel has run: the case's expected
        # outputs, reference() on the new sets
        final = run(copy(sets[0][1]), cots[0], backward=False)
        problem = compare_to_reference(case, combo, final, self._expected(case))
        if problem:
            return (f"after {CALLS + 20} calls the case's outputs are not the test's expected "
                    f"outputs: {problem}"), ""
        for k in kept[1:]:
            try:
                want = reference(replace(case, inputs=map_inputs(
                    case.inputs, lambda s, k=k: as_value(s, self._find(sets[k][1], s.name)))),
                    combo)
            except ReferenceRaised:
                continue
            if want is None:
                break
            problem = compare_to_reference(case, combo, base[k], want)
            if problem:
                return (f"on {sets[k][0]}, inputs the test never gave, the op disagrees with "
                        f"reference() (computed after the kernel ran): {problem}"), ""
        # 7. the gradient is linear in the cotangent
        if wrt:
            problem = self._linear(case, combo, run, sets[0][1], first, names, rng)
            if problem:
                return problem, ""
        return None, (f"{len(kept)} input sets x (fresh buffers, refilled buffers, "
                      f"+{CALLS} calls, a thread, a fork, {len(P.CONDITIONS)} conditions)")

    @staticmethod
    def _find(specs, name):
        for ss in specs.values():
            for s in ss:
                if s.name == name:
                    return s.data
        raise KeyError(name)

    @staticmethod
    def _expected(case):
        return normalize_slots(case.outputs)

    def _linear(self, case, combo, run, specs, first, names, rng):
        prepared_specs = {slot: [type(s)(s.name, s.data.copy(), s.lengths) for s in ss]
                          for slot, ss in specs.items()}
        r = P.cotangent(first, names, rng)
        g_r = run(prepared_specs, r)
        for what, c in P.special_cotangents(first, names):
            c = {n: c.get(n, np.zeros_like(v)) for n, v in r.items()}
            g_c = run(prepared_specs, c)
            g_d = run(prepared_specs, {n: c[n] - r[n] for n in r})
            for n, gc in g_c.items():
                if not n.endswith("@GRAD") or gc is None or g_r.get(n) is None or \
                        g_d.get(n) is None:
                    continue
                a, b, d = (np.asarray(v, np.float64) for v in (gc, g_r[n], g_d[n]))
                # judged at float32's resolution at least: a grad op may compute in the
                # output's dtype (reduce_sum with out_dtype float32)
                eps = max(np.finfo(gc.dtype).eps, np.finfo(np.float32).eps)
                scale = np.abs(a) + np.abs(b) + np.abs(d)
                with np.errstate(invalid="ignore"):
                    top = float(np.nanmax(scale)) if scale.size else 0.0
                # rounding of a sum of many terms (a convolution's) scales with the terms:
                # the array's largest magnitude as a floor; a wrong path is off by O(value)
                bad = np.abs(a - (b + d)) > LINEAR_UNITS * eps * (scale + top) + 1e-300
                bad &= np.isfinite(scale)
                if bad.any():
                    k = int(np.flatnonzero(bad.reshape(-1))[0])
                    idx = np.unravel_index(k, a.shape)
                    return (f"the gradient is not linear in the cotangent: with the cotangent "
                            f"{what}, {fmt_index(n, idx)} = {a.reshape(-1)[k]!r}, but the same "
                            f"cotangent split as r + (c - r) (r random) gives "
                            f"{b.reshape(-1)[k]!r} + {d.reshape(-1)[k]!r} = "
                            f"{(b + d).reshape(-1)[k]!r} ({int(bad.sum())} of {bad.size} "
                            f"elements differ): the grad kernel takes another path for this "
                            f"cotangent")
        return None


def _forked(fn):
    """fn() in a forked child, its result back through a pipe; None where fork is missing."""
    if not hasattr(os, "fork"):
        return None
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            data = pickle.dumps(("ok", fn()))
        except BaseException as exc:  # noqa: BLE001
            data = pickle.dumps(("err", f"{type(exc).__name__}: {exc}"))
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    try:
        status, value = pickle.loads(data)
    except Exception:  # noqa: BLE001
        return "the child died without an answer"
    return value if status == "ok" else value


CHECK = IndistinguishableCheck()
