"""`state`: a case gives the same results whatever ran before it in the process
(docs/harness.md, "`state`")."""
from __future__ import annotations

import functools
import inspect

from harness.reporting.error_text import first_line
from harness.backend import dispatch as backends
from harness.processes import fresh
from harness.backend.case import case_from_test, shifted_case
from harness.checks.base import Check, Derived, Mismatch
from harness.judging.compare import compare_runs
from harness.selecting.discovery import discover, instantiate, seed_all
from harness.reporting.report import FAIL, collecting
from harness.checks.runs.siblings import can_fork, in_fork, run_case_results, sibling_classes
from opkit.project import load_op_modules

LEAK = " -- the kernel keeps state between calls (e.g. a module-level cache keyed too narrowly)"


class StateCheck(Check):
    name = "state"
    description = ("each case gives the same results after the op's other cases ran in the "
                   "same process as in a fresh one")
    order = 180

    def op_results(self, op: str, tests, context) -> list:
        """`state` for every OpTest case of the op at once (what `opkit test` runs: one task
        per op, in a worker where no kernel ran yet): two children forked from it run every
        case in turn, each after itself on other inputs, one in discovery order, one in reverse
        order; a case's results must agree in both (docs/harness.md, "`state`")."""
        seed = context.seed
        results, entries = [], []
        for t in tests:
            if t.error:
                continue              # its own task reports the broken setUp
            try:
                case = case_from_test(instantiate(t.cls, seed), t.source)
            except Exception:  # noqa: BLE001 - its own task reports it
                continue
            skip_map = (case.options or {}).get("skip", {})
            if self.name in skip_map:
                results.append(self.skipped(case, f"opted out: {skip_map[self.name]}"))
                continue
            reason = self.applies(case, context)
            if reason:
                results.append(self.skipped(case, reason))
                continue
            runnable, _ = self.plan(Derived("case", case, case), context, results)
            if runnable:
                entries.append((case, shifted_case(case), runnable))
        if not entries:
            return results
        n = len(entries)

        def sequence(order, fresh_first):
            got = {}
            for k, i in enumerate(order):
                case, other, runnable = entries[i]
                if k or not fresh_first:
                    _runs(other, runnable, seed)
                got[i] = _runs(case, runnable, seed)
            return got

        runs = []       # (order, fresh_first, results): discovery order, then the reverse
        try:
            for order, fresh_first in ((list(range(n)), True), (list(range(n))[::-1], n > 1)):
                runs.append((order, fresh_first,
                             in_fork(functools.partial(sequence, order, fresh_first))))
        except RuntimeError as exc:
            case, _, runnable = entries[0]
            return results + [self.failed(Derived("case", case, case), runnable[0],
                                           f"the child process that runs the op's cases one "
                                           f"after another failed: {exc}")]
        names = [case.name for case, _, _ in entries]

        def history(order, i, fresh_first):
            k = order.index(i)
            if k == 0 and fresh_first:
                return "a fresh process"
            return "after " + ", ".join([names[j] for j in order[:k]] +
                                        ["this case on other inputs of the same shapes"])

        for i, (case, _, runnable) in enumerate(entries):
            derived = Derived("case", case, case)
            (one, want_of), (two, got_of) = [(history(order, i, first), got)
                                             for order, first, got in runs]
            if two == "a fresh process":      # the fresh side is the one expected
                (one, want_of), (two, got_of) = (two, got_of), (one, want_of)
            for combo in runnable:
                key = (combo.place, combo.dtype)
                want, got = want_of[i].get(key), got_of[i].get(key)
                if not want and not got:
                    continue   # the op raises on this case: other checks report it
                results.append(self._agree(derived, combo, want or {}, got or {}, one, two))
        return results

    def _agree(self, derived, combo, want, got, what, history):
        """A pass, or the failure: `got`, after `history` in the same process, is not `want`
        (what `what` gave)."""
        msg = compare_runs(want, got, combo.dtype, what)
        if msg:
            return self.failed(derived, combo, f"{history} in the same process: {msg}{LEAK}",
                               kind=Mismatch)
        return self.passed(derived, combo)

    def applies(self, case, context):
        return None if can_fork() else "needs os.fork to run the other cases in a child process"

    def verdict(self, derived, context):
        case = derived.case
        results = []
        runnable, _ = self.plan(derived, context, results)
        if not runnable:
            return results
        seed = context.seed
        own = type(context.test) if getattr(context, "test", None) is not None else None
        others = [c for c in sibling_classes(derived.base, context) if c is not own]
        other_case = shifted_case(case)
        fresh = _runs(case, runnable, seed)

        def after_others():
            # one child for all combos (a cache keyed without the dtype shows up too): every
            # other case of the op, its outputs checked against ITS expected ones (a leak
            # from this case into it: forked children inherit this case's state, so only an
            # expectation that no process state made can show it), then this case on other
            # inputs of the same shapes, then this case (a leak from the others into it)
            wrong = None
            combos = {(c.place, c.dtype) for c in runnable}
            for cls in others:
                try:       # the OpTest's own output methods: they know what it checks
                    t = instantiate(cls, seed)
                    for r in _output_results(cls, t, seed):
                        if wrong is None and r.status == FAIL and (r.place, r.dtype) in combos:
                            wrong = (cls.__name__, r.place, r.dtype, first_line(r.message))
                    sibling = t.to_case()
                except Exception:  # noqa: BLE001 - that case's own checks report it
                    continue
                _runs(sibling, runnable, seed)    # its gradients too: grad kernels keep state
            _runs(other_case, runnable, seed)
            return wrong, _runs(case, runnable, seed)

        try:
            wrong, later = in_fork(after_others) if any(fresh.values()) else (None, {})
        except RuntimeError as exc:
            return results + [self.failed(derived, runnable[0], f"the child process that "
                                          f"runs the op's other cases failed: {exc}")]
        if wrong is not None:
            name, place, dtype, message = wrong
            cls = next(c for c in others if c.__name__ == name)
            combo = next((c for c in runnable if (c.place, c.dtype) == (place, dtype)),
                         runnable[0])
            if not fails_alone(cls, case.op_type, combo, seed):
                return results + [self.failed(
                    derived, combo, f"the op's cases depend on what ran before them in the "
                    f"process: {name}, run after {derived.base.name}: {message} (it "
                    f"passes in a fresh process){LEAK}", kind=Mismatch)]
        names = [c.__name__ for c in others]
        ran = (", ".join(names) + " and " if names else "") + \
            "this case on other inputs of the same shapes"
        for combo in runnable:
            key = (combo.place, combo.dtype)
            if not fresh[key]:
                continue   # the op raises on this case: other checks report it
            results.append(self._agree(derived, combo, fresh[key], later.get(key) or {},
                                       "fresh process", f"after {ran} ran"))
        return results


def run_seeded(case, combo, seed: int) -> dict:
    """The case's outputs and gradients on the combo, the global generators seeded first (a
    random op draws the same numbers in every process)."""
    seed_all(seed)
    return run_case_results(case, combo.place, combo.dtype, seed)


def _runs(case, runnable, seed: int) -> dict:
    """{(place, dtype): `run_seeded`} of the case on each runnable combo."""
    return {(c.place, c.dtype): run_seeded(case, c, seed) for c in runnable}


def fails_alone(cls, op_type: str, combo, seed: int) -> bool:
    """Whether `cls`'s own output test fails in a fresh interpreter, where nothing else ran:
    then its failure after this case is its own (a wrong expectation), not a state leak.
    Paid only on the failure path."""
    source = backends.describe(op_type).source
    try:
        return bool(fresh.run("harness.checks.runs.state:output_fails", [
            source, inspect.getfile(cls), cls.__name__, combo.place, combo.dtype, seed]))
    except Exception:  # noqa: BLE001 - unknown: keep the finding (it shows its values)
        return False


def output_fails(args) -> bool:
    """In the fresh interpreter of `fails_alone`: whether the class's output methods fail on
    the place and dtype (`args`: [op source file, test file, class name, place, dtype,
    seed])."""
    src, path, name, place, dtype, seed = args
    load_op_modules([src] if src and "/reference_ops/" not in src else [])
    cls = next(t.cls for t in discover([path], seed=seed).tests if t.name == name)
    got = list(_output_results(cls, instantiate(cls, seed), seed))
    return any(r.status == FAIL and r.place == place and r.dtype == dtype for r in got)


def _output_results(cls, t, seed):
    """The results of the output methods (test*output*) of `t`, an instance of the OpTest
    class `cls`, each run with the global generators seeded first."""
    for name in sorted(n for n in dir(cls) if n.startswith("test") and "output" in n and
                       callable(getattr(cls, n))):
        seed_all(seed)
        with collecting() as col:
            getattr(t, name)()
        yield from col


CHECK = StateCheck()
