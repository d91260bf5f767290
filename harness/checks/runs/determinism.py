"""`determinism`: at least 3 runs of forward and backward on the same inputs, and (on the
case itself) two fresh processes with different PYTHONHASHSEED (harness.checks.runs.hashseed), give
bitwise-identical outputs and gradients (docs/harness.md)."""
from __future__ import annotations

import os
import sys

from harness.backend import dispatch as backends
from harness.reporting.error_text import first_line
from harness.checks.base import Check, Mismatch
from harness.judging.compare import fmt_index
from harness.backend.context import (combos, fail, first_difference, pass_, prepare, refeed,
                             run_forward_backward)
from harness.checks.runs.hashseed import HASH_SEEDS, cross_process, enabled
from harness.checks.runs.siblings import sibling_classes
from harness.reporting.values import fmt_value

NAME = "determinism"


def _differs(first: dict, again: dict, run: str) -> str | None:
    for name in first:
        diff = first_difference(first[name], again.get(name))
        if isinstance(diff, str):
            return f"{run}: {name}: {diff}"
        if diff is not None:
            idx, a, b, ulps = diff
            return (f"{run} differs from run 1 at {fmt_index(name, idx)}: {fmt_value(a)} vs "
                    f"{fmt_value(b)} ({ulps} ULP)")
    return None


class DeterminismCheck(Check):
    name = NAME
    description = "repeated runs give bitwise-identical outputs and gradients"
    order = 60
    variants = ("case", "default_attrs")   # the case and its all-default-attrs variant

    def verdict(self, derived, context):
        case = derived.case
        proto = backends.proto(case.op_type)
        if derived.variant == "default_attrs" and proto is not None and \
                proto.attr("seed") is not None:
            return [self.skipped(derived.base, "a random op with its default attrs (seed 0) "
                                 "draws a fresh seed each run")]
        runs = max(3, int(context.runs or 3))
        runnable, results = combos(case, context, NAME)
        steady = []          # the combos whose repeated runs agree: then across processes
        for combo in runnable:
            try:
                prepared = prepare(case, combo)
                first = run_forward_backward(prepared, case, seed=context.seed)
                for k in range(1, runs):
                    refeed(prepared, case, combo)
                    again = run_forward_backward(prepared, case, seed=context.seed)
                    problem = _differs(first, again, f"run {k + 1} of {runs}")
                    if problem:
                        break
            except Exception as exc:
                results.append(fail(NAME, combo, case, "the op raised before the check could "
                                    f"finish: {first_line(exc)}", kind="kernel-raised"))
                continue
            if problem:
                results.append(fail(NAME, combo, case, problem))
            else:
                results.append(pass_(NAME, combo, case, f"{runs} runs bitwise identical"))
                steady.append(combo)
        if steady and derived.variant == "case":     # the case itself, not a variant
            results.extend(self._across_processes(case, context, steady, proto))
        return self.adopt(derived, results, Mismatch)

    def _across_processes(self, case, context, runnable, proto):
        """The results of the pair of fresh processes with different PYTHONHASHSEED."""
        if not enabled() or getattr(context, "hash_seeds", "off") != "own":
            return []       # off (OPKIT_HASH_SEEDS=0, or a library call), or the run's one pair
                            # of children does it (opkit test: harness.executing.pool.run_ops)
        seed_attr = proto.attr("seed") if proto is not None else None
        if seed_attr is not None and not (case.attrs or {}).get("seed", seed_attr.default):
            return [self.skipped(case, "across processes: a random op without a fixed seed "
                                       "(seed 0 draws a fresh seed each run)")]
        classes = []
        for cls in sibling_classes(case, context):      # the op's OpTests: one pair of children
            mod = sys.modules.get(cls.__module__)
            if getattr(mod, "__file__", None):
                classes.append((os.path.abspath(mod.__file__), cls.__name__))
        status, got = cross_process(case, runnable, context.seed, classes=classes)
        if status == "skip":
            return [self.skipped(case, f"across processes: {got}")]
        if status == "fail":
            return [fail(NAME, c, case, got) for c in runnable]
        out = []
        for c in runnable:
            problem = got.get((c.place, c.dtype))
            if problem is False:
                out.append(self.skipped(case, "across processes: the op gave no result in "
                                              "the fresh processes", c))
            else:
                out.append(fail(NAME, c, case, problem) if problem else
                           pass_(NAME, c, case, f"bitwise identical in fresh processes with "
                                 f"PYTHONHASHSEED={HASH_SEEDS[0]} and {HASH_SEEDS[1]}"))
        return out


CHECK = DeterminismCheck()
