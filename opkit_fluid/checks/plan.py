"""`plan`: the op in a program run through the executor's prepared-plan path gives, run after
run, what the plain path gives (docs/harness.md, "Execution-mode checks")."""
from __future__ import annotations

import numpy as np

from harness.backend.case import case_inputs, normalize_slots, shifted_case
from harness.checks.base import Check, KernelRaised, Mismatch
from harness.backend.context import grad_op_types
from harness.checks.modes import (error_line, first_line, kernel_line, one_cpu_combo, producer,
                           steady_difference)
from harness.backend.seam import grad_outputs, has_grad, make_cotangents, output_slots, prepare
from opkit.framework.executor import Executor
from opkit.framework.grad_maker import GRAD_SUFFIX, grad_var_name
from opkit.framework.place import CPUPlace
from opkit.framework.program import Program
from opkit.framework.scope import Scope

RUNS = 4
SUFFIX = "@plan_fetch"


class PlanCheck(Check):
    name = "plan"
    description = ("the op in a program run through the executor's prepared plan, run after "
                   "run on other inputs of the same shapes, gives the plain path's results")
    order = 200
    needs = ("executor_modes",)

    def applies(self, case, context):
        for slot, specs in normalize_slots(case.inputs).items():
            for s in specs:
                if not isinstance(s.data, np.ndarray):
                    return (f"Input({slot}) '{s.name}' is a {type(s.data).__name__}: such a "
                            "feed never takes a prepared plan")
                if s.lengths:
                    return (f"Input({slot}) '{s.name}' has LoD: a feed with LoD never takes a "
                            "prepared plan")
        return None

    def verdict(self, derived, context):
        case = derived.case
        seed = context.seed
        sets = [case, shifted_case(case), shifted_case(shifted_case(case))]

        def plain(combo):
            """The program, and each input set's run through a fresh Executor."""
            program, fetch, feeds = _program(case, combo, seed)
            return program, fetch, feeds, [_run_fresh(program, fetch, feeds(c)) for c in sets]

        def judge(_, problem, combo):
            if problem and problem[0] is None:
                return [self.skipped(derived.base, problem[1], combo)]
            return problem

        return self.compare_each(
            derived, context, combos=one_cpu_combo, base=plain,
            variant=lambda combo, base: self._planned(case, combo, *base[:3], sets, base[3]),
            variant_takes_base=True, compare=judge,
            passed_message=lambda *_: f"{RUNS} runs, the last {RUNS - 2} on a prepared plan",
            base_skip="the op does not run in a program (the plain path raises)")

    def _planned(self, case, combo, program, fetch, feeds, sets, plain):
        exe = Executor(CPUPlace())
        scope = Scope()
        for run in range(RUNS):
            k = run % len(sets)
            how = "plain" if run < 2 else "prepared plan"
            try:
                got = _by_name(fetch, exe.run(program, feed=feeds(sets[k]), fetch_list=fetch,
                                              scope=scope))
            except Exception as exc:  # noqa: BLE001
                frozen = _frozen_outputs(exe, case.op_type)
                note = (f"; the plan made the op's temporaries {', '.join(frozen)} read-only "
                        "after they were produced: a kernel that writes into an array it "
                        "handed out earlier breaks") if frozen and run >= 3 else ""
                return (f"prepared plan, run {run + 1} of {RUNS} ({how}, inputs set {k}): the "
                        f"op raised {first_line(exc)}{error_line(exc)}{note}", KernelRaised)
            found = steady_difference(plain[k], got, "plain path", how, lambda k=k: _run_fresh(
                program, fetch, feeds(sets[k])))
            if found and found[0] is None:
                return found
            if found:
                var, text = found
                where = kernel_line(producer(var, case.op_type, grad_op_types(case)),
                                    combo.dtype)
                return (f"prepared plan, run {run + 1} of {RUNS} ({how}, inputs set {k}): "
                        f"{text} -- {where} keeps something of an earlier run", Mismatch)
        return None


def _frozen_outputs(exe, op_type) -> list[str]:
    """The outputs of `op_type`'s step that a plan of `exe` froze (made read-only)."""
    names = set()
    for prepared in exe._cache.values():
        for plan in prepared.plans.values():
            for op, _fn, ctx, _ in plan.steps:
                if op.type == op_type and ctx is not None:
                    names.update(f"Output({slot}) '{op.output(slot)}'"
                                 for slot, entry in ctx.bind_out.items() if entry[1])
    return sorted(names)


def _program(case, combo, seed):
    """(program, fetch names, feeds(case) -> feed dict) of the op, a scale x1 per float
    output, and the op's grad ops."""
    specs = case_inputs(case, combo.dtype)
    outs = output_slots(case, case.op_type)
    program = Program()
    block = program.global_block()
    for items in specs.values():
        for s in items:
            block.create_var(name=s.name, shape=None, dtype=s.data.dtype.name)
    block.append_op(case.op_type, {k: [s.name for s in v] for k, v in specs.items()},
                    outs, dict(case.attrs or {}))
    # the forward once, to know the outputs' dtypes and shapes (and make cotangents)
    prepared = prepare(case, combo)
    values = prepared.forward()
    fetch = []
    for n, v in values.items():
        if v is not None and v.dtype.kind == "f":
            block.append_op("scale", {"X": [n]}, {"Out": [n + SUFFIX]}, {"scale": 1.0})
            fetch.append(n + SUFFIX)
        elif v is not None:
            fetch.append(n)
    cot_names = []
    if case.grad_inputs and has_grad(case.op_type):
        descs = prepared.grad_ops(tuple(case.no_grad_set or ()))   # the backend's grad ops
        produced = set()
        for d in descs:
            for names in d.inputs.values():
                for n in names:
                    if n.endswith(GRAD_SUFFIX) and n not in produced and not block.has_var(n):
                        block.create_var(name=n, shape=None, dtype=values[n[:-len(GRAD_SUFFIX)]]
                                         .dtype.name)
                        cot_names.append(n)
            block.append_op(d.type, d.inputs, d.outputs, d.attrs)
            produced.update(n for v in d.outputs.values() for n in v)
        fetch += [grad_var_name(n) for n in case.grad_inputs if grad_var_name(n) in produced]
    wanted = set(grad_outputs(case, values))
    made = {}

    def feeds(c):
        if id(c) in made:
            return {n: v.copy() for n, v in made[id(c)][1].items()}
        feed = {s.name: s.data for items in case_inputs(c, combo.dtype).values()
                for s in items}
        if cot_names:
            run = prepare(c, combo).forward()
            cot = make_cotangents(run, [n for n in wanted if n in run], seed=seed)
            for name in cot_names:
                base = name[: -len(GRAD_SUFFIX)]
                value = cot.get(base)
                feed[name] = (value.astype(run[base].dtype) if value is not None
                              else np.zeros_like(run[base]))
        made[id(c)] = (c, feed)
        return {n: v.copy() for n, v in feed.items()}

    return program, fetch, feeds


def _by_name(fetch, got) -> dict:
    """{output or gradient name: a copy of its fetched value}."""
    return {n[: -len(SUFFIX)] if n.endswith(SUFFIX) else n: np.array(v, copy=True)
            for n, v in zip(fetch, got)}


def _run_fresh(program, fetch, feed) -> dict:
    return _by_name(fetch, Executor(CPUPlace()).run(program, feed=feed, fetch_list=fetch,
                                                    scope=Scope()))


CHECK = PlanCheck()
