"""The `lod` check: LoD edge cases and LoD propagation (docs/lod.md, "The `lod` check")."""
from __future__ import annotations

import dataclasses

import numpy as np

from harness.backend.case import normalize_slots
from harness.checks.base import Check, WrongValue
from harness.judging.compare import compare, fmt_index
from harness.backend.context import CheckContext, Combo, combos, describe_error, has_grad, prepare
from harness.judging.grad_judge import exact_verdict
from harness.judging.numeric_gradient import NumericEngine
from opkit_fluid.checks.lod_cases import edge_inputs, edges_for, has_lod_input, two_level_inputs
from harness.reporting.messages import raised
from harness.backend.seam import PreparedOp, grad_wrt, make_cotangents, refusal as opkit_refusal
from harness.reporting.report import FAIL, PASS, SKIP, CheckResult
from harness.reporting.values import fmt_value
from opkit.framework.grad_maker import grad_var_name
from opkit.framework.program import Program
from opkit.framework.tensor import LoDTensor

NAME = "lod"


def _result(status, combo, name, message="", worst=None, not_judged=""):
    return CheckResult(NAME, status, combo.place if combo else "", combo.dtype if combo else "",
                       name, message, worst, not_judged=not_judged)


# -- compile time against run time --------------------------------------------------------
def lod_level_problems(prepared: PreparedOp) -> str | None:
    """After a forward run: the first output whose lod_level from compile-time infer_shape
    (on variable descriptions of the prepared op's inputs: shape, dtype, LoD level) differs
    from its run-time LoD level, as a message naming op, variable and both levels."""
    try:
        block = Program().global_block()
        inputs = {}
        for slot, specs in prepared.inputs.items():
            for s in specs:
                if not isinstance(s.data, np.ndarray):
                    return None      # not a dense tensor: nothing to describe
                block.create_var(name=s.name, shape=list(s.data.shape),
                                 dtype=str(s.data.dtype), lod_level=len(s.lengths or []))
            inputs[slot] = [s.name for s in specs]
        for names in prepared.output_slots.values():
            for n in names:
                if n not in block.vars:
                    block.create_var(name=n)
        block.append_op(type=prepared.op_type, inputs=inputs, outputs=prepared.output_slots,
                        attrs=dict(prepared.attrs))
        levels = {n: block.vars[n].lod_level for names in prepared.output_slots.values()
                  for n in names}
    except TypeError:
        return None
    except Exception as exc:  # noqa: BLE001 - reported
        return f"compile-time infer_shape of op '{prepared.op_type}' raised: {describe_error(exc)}"
    for name, level in levels.items():
        value = prepared.value(name)
        if not isinstance(value, LoDTensor) or not value.is_initialized():
            continue
        runtime = len(value.lod)
        if runtime != (level or 0):
            return (f"op '{prepared.op_type}': output variable '{name}' has lod_level "
                    f"{level} at compile time but a LoD of level {runtime} at run time "
                    f"(lengths {value.recursive_sequence_lengths()}); infer_shape must "
                    f"set_lod_level/share_lod what the kernel outputs")
    return None


# -- gradients ----------------------------------------------------------------------------
def _grad_outputs(case, outs: dict) -> list[str]:
    floats = [n for n, v in outs.items() if v is not None and v.dtype.kind == "f"]
    if case.grad_outputs:
        return [n for n in case.grad_outputs if n in floats]
    return floats


def _check_gradients(case, prepared: PreparedOp, outs: dict, numeric: bool, seed: int):
    """(problem or None, worst relative error) for the prepared op whose forward ran."""
    wrt, explicit = grad_wrt(case, prepared), set(case.grad_inputs or ())
    if not wrt:
        return None, None
    names = _grad_outputs(case, outs)
    cot = make_cotangents(outs, names, seed=seed)
    try:
        grads = prepared.backward(cot, wrt, tuple(case.no_grad_set or ()))
    except Exception as exc:  # noqa: BLE001 - reported
        return f"backward raised: {describe_error(exc)}", None
    specs = {s.name: s for ss in prepared.inputs.values() for s in ss}
    worst = 0.0
    for name in wrt:
        g = grads.get(name)
        spec = specs.get(name)
        if g is None:
            if name in explicit:
                return f"{name}: the grad ops produced no gradient", None
            continue
        if spec is None or not isinstance(spec.data, np.ndarray):
            continue
        if tuple(g.shape) != tuple(spec.data.shape):
            return (f"{grad_var_name(name)} has shape {list(g.shape)}, expected {list(spec.data.shape)} "
                    f"(the shape of {name})"), None
        want = [list(level) for level in (spec.lengths or [])]
        got = [list(level) for level in (prepared.grad_lod(name) or [])]
        if got != want:
            return (f"{grad_var_name(name)} has LoD (lengths) {got}, expected {want} (the LoD of "
                    f"{name}): a grad op must share_lod from {name} to {grad_var_name(name)}"), None
        if not numeric:
            continue
        delta = float(case.options.get("numeric_grad_delta") or 1e-4)
        engine = NumericEngine(prepared, cot, min(delta, 1e-3))   # the one numeric engine
        if spec.data.size == 0:
            continue
        limit = float(case.options.get("max_relative_error") or 0.005)
        # the one gradient judge: that max relative error, a kink passing when the analytic
        # value is one of its one-sided slopes
        c, passed = exact_verdict(engine, name, g, limit)
        worst = max(worst, float(c.worst))
        if not passed:
            return (f"{fmt_index(name, c.index)}: analytic gradient {fmt_value(c.analytic)}, "
                    f"numeric {fmt_value(c.numeric)} (relative error {c.error:.3g} > {limit})",
                    worst)
    return None, worst


# -- outputs ------------------------------------------------------------------------------
def _compare_outputs(case, prepared: PreparedOp, expected: dict, dtype: str):
    """The one comparator (harness.judging.compare) and tolerance table (harness.judging.tolerances)."""
    opts = case.options or {}
    worst = 0.0
    for slot, specs in normalize_slots(expected).items():
        if slot in (case.no_check_set or ()):
            continue
        for spec in specs:
            if not isinstance(spec.data, np.ndarray):
                continue
            got = prepared.array(spec.name)
            msg, w = compare(spec.name, got, spec.data, dtype, opts.get("atol"),
                             opts.get("rtol"), bool(opts.get("equal_nan", False)))
            if w is not None:
                worst = max(worst, w)
            if msg:
                return msg.replace("expected", "the reference gives"), worst
            if spec.lengths is not None:
                lod = [list(x) for x in prepared.lod_lengths(spec.name) or []]
                if lod != [list(x) for x in spec.lengths]:
                    return (f"{spec.name}: LoD (lengths) {lod}, the reference gives "
                            f"{[list(x) for x in spec.lengths]}"), worst
    return None, worst


def _wants_grad(case) -> bool:
    """Gradients are checked when the op has a grad maker, unless the case runs in inference
    mode (attr is_test true) and its test never asked for gradients."""
    return has_grad(case.op_type) and (bool(case.grad_inputs)
                                       or not (case.attrs or {}).get("is_test", False))


# -- the check ----------------------------------------------------------------------------
def _run_one(case, combo: Combo, expected: dict | None, name: str, seed: int,
             description: str) -> CheckResult:
    try:
        prepared = prepare(case, combo)
        outs = prepared.forward()
    except Exception as exc:  # noqa: BLE001 - reported
        return _result(FAIL, combo, name, f"{description}: the op raised "
                                          f"{describe_error(exc)}")
    worst = None
    if expected is not None:
        problem, worst = _compare_outputs(case, prepared, expected, combo.dtype)
        if problem:
            return _result(FAIL, combo, name, f"{description}: {problem}", worst)
    problem = lod_level_problems(prepared)
    if problem:
        return _result(FAIL, combo, name, f"{description}: {problem}", worst)
    numeric = expected is not None and combo.dtype in ("float64", "")
    wants_grad = _wants_grad(case)
    if wants_grad:
        problem, gworst = _check_gradients(case, prepared, outs, numeric, seed)
        if problem:
            return _result(FAIL, combo, name, f"{description}: {problem}", gworst)
    checked = ("outputs, output LoD, " if expected is not None else "") + "compile-time lod_level"
    if wants_grad:
        checked += ", gradient LoD" + (" and numeric gradients" if numeric else "")
    # what the edge cases judge elsewhere and this run did not (the table's `pass*`)
    not_judged = [what for what, left_out in (("output values", expected is None),
                                              ("gradient values", wants_grad and not numeric))
                  if left_out]
    return _result(PASS, combo, name, f"{description}: {checked} ok", worst,
                   ", ".join(not_judged))


def check(case, context: CheckContext | None = None) -> list[CheckResult]:
    context = context or CheckContext()
    if not has_lod_input(case.inputs):
        return [_result(SKIP, None, case.name, "no LoD input")]
    runnable, results = combos(case, context, NAME)
    if not runnable:
        return results or [_result(SKIP, None, case.name,
                                   "no kernel on the selected places and dtypes")]
    for combo in runnable:
        results.append(_run_one(case, combo, None, f"{case.name}/given", context.seed,
                                "the test's own case"))
    results.extend(_two_level(case, runnable))
    if case.reference is None:
        results.append(_result(SKIP, None, f"{case.name}/edges", f"{case.name} defines no "
                               "reference(inputs, attrs): LoD edge cases not generated "
                               "(gradient LoD checked on the test's own case)"))
        return results
    for k, edge in enumerate(edges_for(case)):
        name = f"{case.name}/{edge.name}"
        rng = np.random.default_rng(context.seed + 7919 * k)
        inputs = edge_inputs(case, edge, rng)
        try:
            expected = case.reference(inputs, dict(case.attrs))
        except Exception as exc:  # noqa: BLE001 - the reference rejects this edge
            results.append(_result(SKIP, None, name, f"{edge.description}: the reference "
                                   f"rejects it ({type(exc).__name__}: {exc})"))
            continue
        edge_case = dataclasses.replace(case, name=name, inputs=inputs,
                                        outputs=expected or {})
        for combo in runnable:
            results.append(_run_one(edge_case, combo, expected or {}, name, context.seed,
                                    edge.description))
    return results


_RUNS_ONLY = "output values, gradient values"    # a case judged on running, not on values


def _two_level(case, runnable) -> list[CheckResult]:
    """Every 1-level LoD input wrapped in an outer level (one outer sequence holding all the
    sequences): the op handles it or refuses it with an opkit error; a raw numpy/Python
    exception fails, naming the kernel line."""
    name = f"{case.name}/two_level"
    inputs, wrapped = two_level_inputs(case.inputs)
    if not wrapped:
        return [_result(SKIP, None, name, "no 1-level LoD input to wrap")]
    two = dataclasses.replace(case, name=name, inputs=inputs, outputs={}, reference=None)
    out = []
    what = f"{', '.join(wrapped)} wrapped in an outer LoD level"
    for combo in runnable:
        try:
            prepared = prepare(two, combo)
            outs = prepared.forward()
            if _wants_grad(two) and case.grad_inputs:
                cot = make_cotangents(outs, _grad_outputs(two, outs))
                prepared.backward(cot, grad_wrt(two, prepared), tuple(two.no_grad_set or ()))
        except Exception as exc:  # noqa: BLE001
            refusal = opkit_refusal(exc)
            out.append(_result(PASS, combo, name, f"{what}: refused ({refusal[:100]})",
                               not_judged=_RUNS_ONLY)
                       if refusal else
                       _result(FAIL, combo, name, f"variant 'lod' ({what}): raised a raw "
                                                  f"exception: {raised(exc)}"))
        else:
            out.append(_result(PASS, combo, name, f"{what}: runs", not_judged=_RUNS_ONLY))
    return out


class LodCheck(Check):
    name = NAME
    description = "LoD edge cases (empty sequences, all-empty batch, one sequence)"
    order = 70
    needs = ("lod",)

    def verdict(self, derived, context):
        return self.adopt(derived, check(derived.case, context), WrongValue)


CHECK = LodCheck()
