"""`state`: a case gives the same results whatever ran before it in the process.

Bug class: a kernel that keeps state between calls -- a module-level cache keyed too
narrowly (by shape, ignoring an attribute or the input values), a counter, a lazily built
table -- so the results of a case depend on which other cases (other attrs, other inputs of
the same shapes) ran earlier in the same process. Every case passes alone; a training
program that uses the op twice gets wrong numbers.

How: the case's outputs and gradients in this process, where none of the op's other cases
ran (`opkit test` runs each case in its own forked worker), against those in a forked child
that first runs every other OpTest case of the op and the case itself on other inputs of
the same shapes (every float input rotated), then the case. They must agree within the
output tolerances (bitwise agreement is `determinism`'s business).
"""
from __future__ import annotations

from harness.checks.base import Check, Mismatch

__all__ = ["CHECK", "StateCheck"]


class StateCheck(Check):
    name = "state"
    description = ("each case gives the same results after the op's other cases ran in the "
                   "same process as in a fresh one")
    order = 180
    variants = ("case",)

    def applies(self, case, context):
        from harness.checks.siblings import can_fork

        return None if can_fork() else "needs os.fork to run the other cases in a child process"

    def verdict(self, derived, context):
        from dataclasses import replace

        from harness.checks.ownership import other_inputs
        from harness.checks.siblings import in_fork, run_case_results, sibling_classes
        from harness.pipeline import compare_runs
        from harness.runner import normalize_slots

        case = derived.case
        results = []
        runnable, _ = self.plan(derived, context, results)
        seed = getattr(context, "seed", 2024)
        own = type(context.test) if getattr(context, "test", None) is not None else None
        others = [c for c in sibling_classes(derived.base, context) if c is not own]
        shifted = {slot: [(s.name, other_inputs(s.name, s.data), s.lengths)
                          for s in specs] for slot, specs in normalize_slots(case.inputs).items()}

        def fed(specs):
            out = {}
            for slot, items in specs.items():
                vals = [((a, (d, ln)) if ln else (a, d)) for a, d, ln in items]
                out[slot] = vals if len(vals) > 1 or slot not in case.inputs or \
                    isinstance(case.inputs[slot], list) else vals[0][1]
            return out

        other_case = replace(case, inputs=fed(shifted))
        names = [c.__name__ for c in others]
        for combo in runnable:
            fresh = run_case_results(case, combo.place, combo.dtype, seed)
            if not fresh:
                continue   # the op raises on this case: other checks report it

            def after_others(combo=combo):
                from harness.discovery import instantiate, seed_all
                from harness.report import FAIL, collecting

                wrong = None
                for cls in others:         # each runs after this case ran in this process:
                    try:                   # its own check_output must still pass
                        t = instantiate(cls, seed)
                        methods = sorted(n for n in dir(cls) if n.startswith("test") and
                                         "output" in n and callable(getattr(cls, n)))
                        for mname in methods:
                            seed_all(seed)
                            with collecting() as col:
                                getattr(t, mname)()
                            bad = [r for r in col if r.status == FAIL and
                                   r.place == combo.place and r.dtype == combo.dtype]
                            if bad and wrong is None and \
                                    not fails_alone(cls, case.op_type, combo, seed):
                                wrong = (f"{cls.__name__}, run after {derived.base.name}: "
                                         f"{bad[0].message.splitlines()[0]}")
                    except Exception:  # noqa: BLE001 - that case's own checks report it
                        continue
                run_case_results(other_case, combo.place, combo.dtype, seed)
                return wrong, run_case_results(case, combo.place, combo.dtype, seed)

            try:
                wrong, later = in_fork(after_others)
            except RuntimeError as exc:
                results.append(self.failed(derived, combo, f"the child process that runs the "
                                           f"op's other cases failed: {exc}"))
                continue
            ran = (", ".join(names) + " and " if names else "") + \
                "this case on other inputs of the same shapes"
            msg = compare_runs(fresh, later, combo.dtype, "fresh process")
            if wrong and not msg:
                results.append(self.failed(
                    derived, combo, f"the op's cases depend on what ran before them in the "
                    f"process: {wrong} -- the kernel keeps state between calls (e.g. a "
                    "module-level cache keyed too narrowly)", kind=Mismatch))
                continue
            if msg:
                results.append(self.failed(
                    derived, combo, f"after {ran} ran in the same process: {msg} -- the "
                    "kernel keeps state between calls (e.g. a module-level cache keyed too "
                    "narrowly)", kind=Mismatch))
            else:
                results.append(self.passed(derived, combo))
        return results


def fails_alone(cls, op_type: str, combo, seed: int) -> bool:
    """Whether `cls`'s own output test fails in a fresh interpreter, where nothing else ran:
    then its failure after this case is its own (a wrong expectation), not a state leak.
    Paid only on the failure path."""
    import inspect
    import json
    import subprocess
    import sys

    from opkit.registry import op_info

    source = (op_info(op_type).source or "").rsplit(":", 1)[0]
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from opkit.project import load_op_modules\n"
        "from harness.discovery import _import_test_file, instantiate, seed_all\n"
        "from harness.report import FAIL, collecting\n"
        "src, path, name, place, dtype, seed = json.loads(sys.argv[1])\n"
        "load_op_modules([src] if src and '/reference_ops/' not in src else [])\n"
        "cls = getattr(_import_test_file(Path(path)), name)\n"
        "t = instantiate(cls, seed)\n"
        "bad = False\n"
        "for m in sorted(n for n in dir(cls) if n.startswith('test') and 'output' in n):\n"
        "    seed_all(seed)\n"
        "    with collecting() as col:\n"
        "        getattr(t, m)()\n"
        "    bad = bad or any(r.status == FAIL and r.place == place and r.dtype == dtype "
        "for r in col)\n"
        "print(json.dumps(bad))\n")
    try:
        args = json.dumps([source, inspect.getfile(cls), cls.__name__, combo.place,
                           combo.dtype, seed])
        done = subprocess.run([sys.executable, "-c", code, args], capture_output=True,
                              text=True, timeout=120)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001 - unknown: keep the finding (it shows its values)
        return False


CHECK = StateCheck()
