"""`concurrency`: THREADS threads running the op at once, each on other inputs of the same
shapes and taking turns line by line in kernel code (`Lockstep`), each get bitwise what a
single-threaded run gives them. Once per op; an op class opts out with
`not_thread_safe = "reason"`. docs/harness.md, "Execution-mode checks"."""
from __future__ import annotations

import functools
import os
import sys
import threading
import time

from harness.backend import dispatch as backends
from harness.backend.dispatch import cannot
from harness.backend.case import shifted_case
from harness.checks.base import Check, KernelRaised, Mismatch
from harness.backend.context import Hooks, grad_op_types, prepare, run_forward_backward
from harness.reporting.messages import skip_prefixes
from harness.checks.modes import (error_line, first_line, kernel_line, one_cpu_combo, producer,
                           steady_difference)
from harness.backend.seam import run as run_case

THREADS = 4
ROUNDS = 1
NATIVE_ROUNDS = 25   # rounds per thread where kernels cannot be hooked (no lockstep): a race
                     # shows by chance only, so more of them


class ConcurrencyCheck(Check):
    name = "concurrency"
    description = (f"{THREADS} threads running the op at once on other inputs of the same "
                   "shapes each get the single-threaded results")
    order = 190
    per_case = False

    def applies(self, case, context):
        reason = backends.describe(case.op_type).not_thread_safe
        if reason:
            return f"op '{case.op_type}' declares its kernels not thread-safe: {reason}"
        return None

    def verdict(self, derived, context):
        case = derived.case
        seed = context.seed
        cases = [case]
        while len(cases) < THREADS:
            cases.append(shifted_case(cases[-1]))
        grads = grad_op_types(case)
        info: dict = {}

        def alone(combo, k=None):
            """Each input set run alone (the case's own: the plain run other checks share);
            set `k` only, run again, when given."""
            if k is not None:
                return run_forward_backward(prepare(cases[k], combo), cases[k], seed=seed)
            return [run_case(case, combo, context)] + [alone(combo, k)
                                                       for k in range(1, len(cases))]

        def judge(single, got, combo):
            for k, runs in enumerate(got):
                for r, res in enumerate(runs):
                    if isinstance(res, BaseException):
                        return (f"{THREADS} threads at once: thread {k} (round {r + 1}) "
                                f"raised {first_line(res)}{error_line(res)}", KernelRaised)
                    found = steady_difference(single[k], res, "alone",
                                              f"with {THREADS} threads",
                                              lambda k=k: alone(combo, k))
                    if found and found[0] is None:
                        return [self.skipped(derived.base, found[1], combo)]
                    if found:
                        var, text = found
                        op = producer(var, case.op_type, grads)
                        where = kernel_line(op, combo.dtype) if info.get("lockstep", True) \
                            else f"the kernel of '{op}'"
                        return (f"{THREADS} threads at once: thread {k} (round {r + 1}, "
                                f"{'the case' if k == 0 else 'other inputs of its shapes'}"
                                f"): {text} -- {where} shares state between calls (a "
                                "module-level buffer or cache, a global generator)", Mismatch)
            return None

        return self.compare_each(
            derived, context, combos=one_cpu_combo, base=alone,
            variant=lambda combo: _threaded(cases, combo, seed, info), compare=judge,
            passed_message=lambda *_: f"{THREADS} threads x {info.get('rounds', ROUNDS)} "
                                      f"rounds" + ("" if info.get("lockstep", True) else
                                                   ", kernels at once (no lockstep: they "
                                                   "cannot be hooked)"),
            base_skip="the case itself raises")


class Lockstep:
    """Makes N threads take turns line by line inside kernels (docs/harness.md,
    `concurrency`). A thread entering its i-th kernel waits for every live thread to enter
    theirs; at each line of user code (not numpy, the framework, the harness or the
    standard library) it hands the turn on and waits for its own. A wait gives up only on
    threads that are stalled (a thread blocked on a lock the waiter holds), not on slow
    ones: every WAIT (ENTER_WAIT) seconds it looks at the threads it waits for, and goes on
    when none of them has been runnable or used CPU time over STALLED_LOOKS looks (Linux:
    /proc and the threads' CPU clocks; where those cannot be read, the wait ends after one
    WAIT as before). A machine under load so only slows the lockstep down: the lines
    interleave in the same order, and the same racing value is reported, on every run."""

    WAIT = 0.02
    ENTER_WAIT = 0.2
    STALLED_LOOKS = 3

    def __init__(self, n: int):
        self.cv = threading.Condition()
        self.turn = None
        self.holding = None      # the thread running a line with the turn
        self.inside: list = []
        self.live = n
        self.entered = [0] * n
        self.arrived: dict = {}
        self.threads: dict = {}      # k -> (threading ident, native thread id)
        self.finished: set = set()
        self.waiting: set = set()    # the threads now in a wait of the lockstep
        self.ticks = 0               # counts the lockstep's steps: a waiting thread whose
        #                              turn comes is not stalled
        skip = skip_prefixes()
        self.is_user = functools.cache(lambda filename: not (
            filename.startswith("<") or os.path.realpath(filename).startswith(skip)))

    def register(self, k: int) -> None:
        """Called by thread k itself (before its first kernel): its waits can be judged."""
        with self.cv:
            self.threads[k] = (threading.get_ident(), threading.get_native_id())

    def _marks(self, ks):
        """A token of the progress of threads `ks`: None when it cannot be read (or when a
        thread is gone), a fresh object when one of them is runnable (never equal to an
        earlier token: it is working, wait on), else their CPU times."""
        out = [self.ticks]
        for k in ks:
            if k in self.waiting:      # waits on the lockstep itself (its polls use CPU)
                out.append("waiting")
                continue
            if k not in self.threads:     # not started yet (None: nobody registers)
                return object() if self.threads else None
            ident, native = self.threads[k]
            try:
                with open(f"/proc/self/task/{native}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
                cpu = time.clock_gettime_ns(time.pthread_getcpuclockid(ident))
            except (OSError, AttributeError, IndexError, ValueError):
                return None
            if state == b"R":
                return object()
            out.append(cpu)
        return tuple(out)

    def _wait(self, k: int, ready, whom, timeout: float) -> None:
        """Wait (holding self.cv) until ready(), or until the threads whom() returns are
        stalled: no progress over STALLED_LOOKS looks, one every `timeout` seconds (a
        thread that waits a moment for the GIL held by a thread the OS put aside is not
        stalled)."""
        last, still = None, 0
        self.waiting.add(k)
        try:
            while not self.cv.wait_for(ready, timeout=timeout):
                now = self._marks(whom())
                if now is None:
                    return
                still = still + 1 if now == last else 0
                if still >= self.STALLED_LOOKS:
                    return
                last = now
        finally:
            self.waiting.discard(k)

    def _next(self, k: int):
        later = [i for i in self.inside if i > k]
        return later[0] if later else (self.inside[0] if self.inside else None)

    def enter(self, k: int) -> None:
        with self.cv:
            self.ticks += 1
            i = self.entered[k]
            self.entered[k] += 1
            self.arrived[i] = self.arrived.get(i, 0) + 1
            self.inside = sorted(self.inside + [k])    # in the ring before anyone runs a line
            self.cv.notify_all()
            self._wait(k, lambda: self.arrived[i] >= self.live,
                       lambda: [j for j in range(len(self.entered))
                                if j not in self.finished and self.entered[j] <= i],
                       self.ENTER_WAIT)
            if self.turn not in self.inside:
                # the lowest thread inside starts, not whichever the OS woke first: the
                # same order of lines on every run, so the same racing value is reported
                self.turn = self.inside[0]

    def leave(self, k: int) -> None:
        with self.cv:
            self.ticks += 1
            if k in self.inside:
                self.inside.remove(k)
            if self.holding == k:
                self.holding = None
            if self.turn == k or self.turn not in self.inside:
                self.turn = self._next(k)
            self.cv.notify_all()

    def done(self, k: int) -> None:
        self.leave(k)
        with self.cv:
            self.finished.add(k)
            self.live -= 1
            self.cv.notify_all()

    def step(self, k: int) -> None:
        """At a line of thread k: if k holds the turn (it ran its previous line with it),
        hand the turn to the next thread; then wait for k's turn and hold it while this line
        runs. A thread given the turn before its first line runs that line (it does not pass
        the turn on unused), so the lines interleave in the same order on every run."""
        with self.cv:
            self.ticks += 1
            if self.holding == k:
                self.holding = None
                self.turn = self._next(k)
                self.cv.notify_all()
            if self.turn != k and self.turn in self.inside:
                self._wait(k, lambda: self.turn == k or self.turn not in self.inside,
                           lambda: [self.turn], self.WAIT)
            if self.turn == k or self.turn not in self.inside:
                self.turn = self.holding = k

    def tracer(self, k: int):
        def local(frame, event, arg):
            if event == "line":
                self.step(k)
            return local

        def on_call(frame, event, arg):
            return local if self.is_user(frame.f_code.co_filename) else None
        return on_call


class _KernelTurns(Hooks):
    """Kernel hooks of thread k: enter the lockstep and trace the kernel's lines."""

    def __init__(self, lockstep: Lockstep, k: int):
        self.lockstep, self.k, self.trace = lockstep, k, lockstep.tracer(k)

    def before_kernel(self, op, ctx):
        self.lockstep.enter(self.k)
        sys.settrace(self.trace)

    def after_kernel(self, op, ctx):
        sys.settrace(None)
        self.lockstep.leave(self.k)


def _threaded(cases, combo, seed, info: dict) -> list[list]:
    """Each thread's results per round (or the exception it raised). Kernels the harness
    cannot hook (another framework's compiled kernels, a backend that lacks the capability
    `kernel_hooks`: Paddle's, which release the GIL while they run) run truly at once,
    without the lockstep, NATIVE_ROUNDS times."""
    prepared = [prepare(c, combo) for c in cases]
    hooked = cannot("kernel_hooks") is None
    lockstep = Lockstep(len(cases)) if hooked else None
    rounds = ROUNDS if hooked else NATIVE_ROUNDS
    info.update(rounds=rounds, lockstep=hooked)
    out = [[] for _ in cases]
    barrier = threading.Barrier(len(cases))

    def work(k):
        hooks = _KernelTurns(lockstep, k) if hooked else None
        if lockstep is not None:
            lockstep.register(k)
        try:
            if not hooked:
                barrier.wait(timeout=60)
            for _ in range(rounds):
                try:
                    out[k].append(run_forward_backward(prepared[k], cases[k], seed=seed,
                                                       hooks=hooks))
                except Exception as exc:  # noqa: BLE001 - reported with its line
                    out[k].append(exc)
                    return
        finally:
            sys.settrace(None)
            if lockstep is not None:
                lockstep.done(k)

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return out


CHECK = ConcurrencyCheck()
