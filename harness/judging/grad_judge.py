"""check_grad: analytic gradients (the op's grad maker) against numeric ones (float64).

The loss is `sum(cot * out)` over the checked outputs with a fixed random cotangent
(`harness.backend.seam.make_cotangents`); numeric gradients come from `harness.judging.numeric_gradient` (exact
colouring or the randomized fast mode); analytic ones from `PreparedOp.backward` on every
place x float dtype with a kernel. One CheckResult per place x dtype. See docs/gradients.md.
"""
from __future__ import annotations

import numpy as np

from harness.backend.case import case_inputs, normalize_slots
from harness.judging.numeric_gradient import (AUTO_EXACT_MAX_ELEMENTS, AUTO_MAX_COLOURS, CONFIRM_FACTOR,
                              ERROR_FACTOR, F64_RTOL, FAST_BLOCKS, NumericEngine, allowed_error,
                              compare)
from harness.judging.one_sided import KINK_MATCH_TOL, unexplained
from harness.backend.seam import make_cotangents
from harness.options import DEFAULT_SEED, current
from harness.judging.compare import compare as compare_outputs, fmt_index
from harness.judging.output_judge import case_repro, expected_outputs, first_line, prepare_case, run_combos
from harness.reporting.report import FAIL, PASS, SKIP, CheckResult
from harness.judging.tolerances import GRAD_ABS_FLOOR, VACUOUS_ABS, grad_tolerance
from harness.reporting.values import fmt_value
from opkit.framework.dtypes import low_precision_of
from opkit.framework.grad_maker import grad_var_name

__all__ = ["check_grad", "case_grads", "check_case", "resolve_mode", "MODES",
           "first_gradient_failure", "told_failure", "without_repro", "exact_verdict",
           "compare_fast"]

MODES = ("auto", "exact", "fast", "dense")


def resolve_mode(mode=None) -> str:
    """The mode argument, else the run's option (harness.options: $OPKIT_GRAD_MODE), else
    "auto"."""
    mode = (mode or current().grad_mode or "auto").strip().lower()
    if mode not in MODES:
        raise ValueError(f"unknown gradient check mode {fmt_value(mode)}: choose from "
                         f"{', '.join(MODES)}")
    return mode


def numeric_dtype(case) -> str | None:
    from harness.backend.dispatch import declared

    cpu = declared().kernel_places(case.op_type).get("CPU", [])
    return next((d for d in ("float64", "float32") if d in cpu), None)


def check_grad(case, inputs_to_check, output_names, no_grad_set=None,
               max_relative_error=0.005, numeric_grad_delta=0.005, user_defined_grads=None,
               mode=None, repro="", places=None, dtypes=None, seed=DEFAULT_SEED,
               fast_blocks: int = FAST_BLOCKS) -> list[CheckResult]:
    """Analytic against numeric gradients of `inputs_to_check` for the loss over
    `output_names`, on every place x float dtype with a kernel. `fast_blocks`: the blocks
    each random direction of fast mode is split into (fewer: fewer forward runs, a coarser
    screen; a caller that screens with few blocks re-runs exact mode on a failure)."""
    tail = f"\nreproduce: {repro}" if repro else ""
    op = case.op_type
    inputs_to_check, output_names = ([n] if isinstance(n, str) else list(n)
                                     for n in (inputs_to_check, output_names))
    no_grad = tuple(no_grad_set or ())

    def failed(msg, place="", dtype=""):
        return [CheckResult("grad", FAIL, place, dtype, case.name, f"op '{op}': {msg}{tail}")]

    try:
        mode = resolve_mode(mode)
    except ValueError as exc:
        return failed(str(exc))

    from harness.backend.dispatch import declared

    if not declared().has_grad(op):
        return failed("registers no grad maker: it has no gradient to check")
    both = [n for n in inputs_to_check if n in no_grad]
    if both:
        return failed(f"{', '.join(both)} is both in inputs_to_check and no_grad_set")
    num_dtype = numeric_dtype(case)
    if num_dtype is None:
        return failed("has no float CPU kernel to compute numeric gradients with")
    expected = normalize_slots(expected_outputs(case))

    # -- numeric side (float64 on CPU) -------------------------------------------------------
    try:
        prepared = prepare_case(case, "CPU", num_dtype, expected)
        outs = prepared.forward()
    except Exception as exc:  # noqa: BLE001
        return failed(f"the forward op raised {first_line(exc)}", "CPU", num_dtype)
    for n in output_names:
        if n not in outs:
            return failed(f"'{n}' is not an output of the op (outputs: {', '.join(outs)})")
        if outs[n] is None or outs[n].dtype.kind != "f":
            return failed(f"output '{n}' is not a float tensor: it has no gradient")
    if user_defined_grads is not None:
        # Paddle's convention: user gradients are those of mean(out) (averaged over outputs)
        cot = {n: np.full(outs[n].shape, 1.0 / max(outs[n].size, 1) / len(output_names))
               for n in output_names}
    else:
        cot = make_cotangents(outs, output_names, seed=seed)
    low = low_precision_of(normalize_slots(case.inputs))
    if low:     # the cotangent both sides see: exactly representable in the run's dtype
        cot = {n: c.astype(low).astype(np.float64) for n, c in cot.items()}
    engine = NumericEngine(prepared, cot, numeric_grad_delta, seed=seed, base_outputs=outs)
    numeric, fast = {}, {}
    notes = []
    try:
        for i, name in enumerate(inputs_to_check):
            if name not in engine.base:
                return failed(f"'{name}' is not a float input of the op (float inputs: "
                              f"{', '.join(engine.base) or 'none'})")
            if user_defined_grads is not None:
                numeric[name] = np.asarray(user_defined_grads[i], dtype=np.float64)
                continue
            picked = mode
            if mode == "auto":          # fast for a large input that needs many colours
                picked = "exact"
                if engine.base[name].size > AUTO_EXACT_MAX_ELEMENTS and engine.discover(
                        name, max_colours=AUTO_MAX_COLOURS).colours > AUTO_MAX_COLOURS:
                    picked = "fast"
            if picked == "fast":
                fast[name] = engine.directions(name, n_blocks=fast_blocks, lazy=True)
            else:
                numeric[name] = engine.exact(name, dense=(picked == "dense"), lazy=True)
            notes.append((name, picked))
    except Exception as exc:  # noqa: BLE001
        return failed(f"computing numeric gradients raised {first_line(exc)}", "CPU", num_dtype)

    # -- analytic side, every place x dtype --------------------------------------------------
    runnable, results = run_combos(case, "grad", places, dtypes)
    outs_list = ", ".join(output_names)
    for place, dtype in runnable:
        where = f"op '{op}' on {place}" + (f" {dtype}" if dtype else "")
        tol = grad_tolerance(dtype or num_dtype, max_relative_error)
        if np.dtype(dtype or num_dtype) == np.float64 and num_dtype == "float64" and \
                user_defined_grads is None:
            tol = None                    # float64: the bound from the engine's error estimate
        p = None
        try:
            if place == "CPU" and dtype == num_dtype:
                # the numeric side's op, reset to fresh inputs and an empty scope: the state
                # of a new PreparedOp (contract.PreparedOp.reset), its operator already made
                p = prepared
                p.reset(case_inputs(case, dtype))
            else:
                p = prepare_case(case, place, dtype, expected)
            run_outs = p.forward()
            cot_run = {n: c.astype(run_outs[n].dtype) for n, c in cot.items()}
            analytic = p.backward(cot_run, inputs_to_check, no_grad)
        except Exception as exc:  # noqa: BLE001
            if p is prepared:
                _fresh_inputs(prepared, case, num_dtype)
            results.append(CheckResult("grad", FAIL, place, dtype, case.name,
                                       f"{where}: the grad op raised {first_line(exc)}{tail}"))
            continue
        if p is prepared:   # the engine runs on it again (settling, confirming)
            _fresh_inputs(prepared, case, num_dtype)
        problems, vacuous, worst = [], [], 0.0
        for name in inputs_to_check:
            ana = analytic.get(name)
            if ana is None:
                problems.append(f"no analytic gradient of {name} (the grad ops did not "
                                f"produce {grad_var_name(name)})")
                continue
            ana = np.asarray(ana, dtype=np.float64)
            shape = engine.base[name].shape
            if ana.shape != shape:
                problems.append(f"gradient of {name} has shape {ana.shape}, expected {shape}")
                continue
            if name in numeric:
                msg, w, vac = _compare_exact(engine, name, ana, numeric[name], tol,
                                             given=user_defined_grads is not None)
            else:
                msg, w, vac = compare_fast(engine, name, ana, fast[name], tol)
            worst = max(worst, w)
            if msg:
                problems.append(msg)
            elif vac:
                vacuous.append(name)
        if not problems and len(inputs_to_check) > 1:
            problems += _check_subsets(case, dtype, cot, inputs_to_check, no_grad, analytic, p)
            if p is prepared:
                _fresh_inputs(prepared, case, num_dtype)
        if problems:
            status = FAIL
            msg = f"{where}: gradient w.r.t. outputs {outs_list}: " + "; ".join(problems) + tail
        else:
            status = PASS
            msg = "; ".join(f"vacuous: numeric gradient of {n} is zero everywhere (the check "
                            f"proves nothing)" for n in vacuous)
        results.append(CheckResult("grad", status, place, dtype, case.name, msg, worst))
    # how the numeric side was computed (kept on the first passing result for the report)
    for r in results:
        if r.status == PASS and not r.message and notes:
            r.message = f"numeric ({num_dtype}): " + "; ".join(
                f"{n}: {engine.info.get(n, {}).get('method', picked)}, "
                f"{engine.info.get(n, {}).get('forward_runs', 0)} forward runs"
                for n, picked in notes)
            break
    return results


def _fresh_inputs(prepared, case, dtype) -> None:
    """The numeric side's PreparedOp back to fresh inputs after an analytic run on it: a grad
    kernel that wrote into an input must not change the numeric runs that follow (the engine
    sets only the input it perturbs)."""
    try:
        prepared.reset(case_inputs(case, dtype))
    except Exception:  # noqa: BLE001 - the engine's own runs report a broken op
        pass


def _check_subsets(case, dtype, cot, inputs_to_check, no_grad, analytic, prepared):
    """Each checked input's gradient again with it as the ONLY one requested (the others in
    no_grad_set, as when they are parameters frozen or data): a grad kernel has a separate
    path when some of its outputs are not wanted (Paddle's `if (dx)` / `if (dy)`), and
    that path must give the same gradient as the full one. Problems (strings).
    `prepared`: the PreparedOp of the full run, reset to fresh inputs and an empty scope and
    run forward once; every subset's grad ops then run on that forward (the analytic side is
    computed by the op for every subset, only the forward run is shared). Before each later
    subset the inputs and forward outputs in the scope are compared, bit for bit, with what
    the shared forward left: a grad kernel that wrote into them gets a fresh reset and
    forward for the next subset, as a new PreparedOp would. (A gradient left in the scope by
    an earlier subset cannot stand in for a later one's: there its input was in the
    no_grad_set, so the grad ops had no such output to write.)"""
    problems = []
    fresh, cot_run = None, None
    for name in inputs_to_check:
        others = [n for n in inputs_to_check if n != name]
        only = f"with only {name} requested ({', '.join(others)} in no_grad_set)"
        try:
            if fresh is None or not _unchanged(prepared, fresh):
                prepared.reset(case_inputs(case, dtype))
                run_outs = prepared.forward()
                cot_run = {n: c.astype(run_outs[n].dtype) for n, c in cot.items()}
                fresh = _snapshot(prepared)
            got = prepared.backward(cot_run, [name], tuple(no_grad) + tuple(others)).get(name)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{only} the grad op raised {first_line(exc)}")
            fresh = None
            continue
        want = analytic.get(name)
        if want is None:
            continue
        if got is None:
            problems.append(f"{only} the grad ops did not produce {grad_var_name(name)}")
            continue
        got, want = np.asarray(got), np.asarray(want)
        if got.shape == want.shape and np.array_equal(got, want):
            continue                      # the same bits: nothing to compare
        msg, _ = compare_outputs(grad_var_name(name), got, want,
                                 dtype or np.asarray(want).dtype, None, None, False)
        if msg:
            problems.append(f"{only} its gradient differs from the one computed with all of "
                            f"{', '.join(inputs_to_check)} requested (expected): "
                            f"{msg.replace('output ', '', 1)}")
    return problems


def _snapshot(prepared) -> dict:
    """{name: (bytes, shape, dtype, LoD)} of the op's inputs and outputs in its scope."""
    out = {}
    for n in list(prepared.input_names()) + list(prepared.output_names()):
        a = prepared.array(n)
        if a is not None:
            a = np.asarray(a)
            out[n] = (a.tobytes(), a.shape, a.dtype.str, prepared.lod_lengths(n))
    return out


def _unchanged(prepared, fresh: dict) -> bool:
    """Whether the scope still holds, bit for bit, what `_snapshot` recorded (and nothing
    of it disappeared)."""
    now = _snapshot(prepared)
    return now.keys() == fresh.keys() and all(now[n] == fresh[n] for n in fresh)


MAX_KINK_PROBES = 64   # elements over tolerance probed one-sidedly before giving up
MAX_TIE_PROBES = 1024  # ... probed when more are off: then only a true kink (the one-sided
                       # slopes disagree) passes; a constant input to a max is all ties


def exact_verdict(engine, name, ana, tol=None, numeric=None, probes=MAX_TIE_PROBES,
                  each=MAX_KINK_PROBES, local=True):
    """THE exact gradient verdict, first or second order, any dtype: (Comparison, passed).

    harness.judging.numeric_gradient.compare of the analytic gradient `ana` of input `name` against the
    engine's numeric one (`numeric`: one given instead, taken as it is) -- the float64 bound
    from the engine's error estimate (`tol` None) or that max relative error, mismatches
    confirmed with a smaller step. Then, up to `probes` wrong elements, those where the
    one-sided slopes disagree (a kink) pass when the analytic value equals one of them
    (harness.judging.one_sided; `local`: or the local slope), never when it equals neither: with at most
    `each` wrong every one is probed and the comparison keeps those left, beyond that
    probing stops at the first left and the comparison stands. `passed`: nothing is wrong
    (the Comparison is the one before the kinks were taken out when they explain all)."""
    c = compare(engine, name, ana, tol, numeric=numeric)
    if not c.ok and numeric is None and 0 < c.bad <= probes:
        many = c.bad > each      # then probing stops at the first element left
        left_bad = unexplained(engine, name, ana, c.mask,
                               tol if tol is not None else KINK_MATCH_TOL,
                               local=local and not many, first_only=many)
        if not left_bad:
            return c, True
        if not many:        # (many: probing stopped at the first; the comparison stands)
            c = c.restrict(left_bad)
    return c, c.ok


def _compare_exact(engine, name, ana, num, tol, given=False):
    """(failure message or None, worst error, vacuous): exact_verdict, worded for the
    first-order gradient."""
    c, passed = exact_verdict(engine, name, ana, tol, numeric=num if given else None)
    if passed:
        return None, c.worst, c.vacuous
    bound = (f"max relative error {tol:g}" if tol is not None else
             f"the float64 bound (max relative error {F64_RTOL:g} + {ERROR_FACTOR:g} x the "
             f"numeric error estimate; here {c.allowed:.3g})")
    extra = (" (the numeric gradient is zero everywhere: the analytic one should be too)"
             if c.vacuous else "")
    confirm = (f", confirmed with a {1 / CONFIRM_FACTOR:g}x smaller step: numeric "
               f"{fmt_value(c.numeric_confirm)}" if c.numeric_confirm is not None else "")
    return (f"{name}: {c.bad} of {c.size} elements exceed {bound}; worst "
            f"{fmt_index(name, c.index)}: analytic {fmt_value(c.analytic)}, numeric "
            f"{fmt_value(c.numeric)}, error {c.error:.4g} (|analytic - numeric| / max(|numeric|, "
            f"{GRAD_ABS_FLOOR:g})){confirm}{extra}", c.worst, c.vacuous)


def compare_fast(engine, name, ana, directions, tol):
    worst, bad_u = 0.0, None
    estimates = engine.info.get(name, {}).get("direction_errors") or [0.0] * len(directions)
    for i, ((u, d), est) in enumerate(zip(directions, estimates)):
        terms = ana * u         # = engine.direction_error / direction_denominator, once
        g_u, norm = float(terms.sum()), float(np.sqrt(np.dot(terms.reshape(-1),
                                                             terms.reshape(-1))))

        def judged(d, est, g_u=g_u, norm=norm):
            denom = max(abs(d), norm, GRAD_ABS_FLOOR)
            return abs(g_u - d) / denom, allowed_error(tol, est, denom)

        e, allowed = judged(d, est)
        while e > allowed:      # a lazy block disagrees: one level further, and again
            got = engine.refine_direction(name, i)
            if got is None:
                break
            d, est = got
            directions[i], estimates[i] = (u, d), est
            e, allowed = judged(d, est)
        worst = max(worst, e)
        if e > allowed and bad_u is None:
            bad_u = (u, d, e, allowed)
    vacuous = all(abs(d) <= VACUOUS_ABS for _, d in directions) and \
        all(abs(float((ana * u).sum())) <= VACUOUS_ABS for u, _ in directions)
    if bad_u is None:
        return None, worst, vacuous
    u, d, e, allowed = bad_u
    found = engine.localize(name, ana, u, tol)
    if not found:
        return (f"{name}: directional derivative along a random direction: analytic "
                f"{fmt_value(float((ana * u).sum()))}, numeric {fmt_value(d)}, error {e:.4g} > "
                f"{allowed:g} (fast mode could not localize it to single elements; rerun with "
                f"mode='exact')", worst, False)
    items = ", ".join(f"{fmt_index(name, f.index)}: analytic {fmt_value(f.analytic)}, numeric "
                      f"{fmt_value(f.numeric)}, error {f.error:.4g}" for f in found)
    limit = f"{tol:g}" if tol is not None else "float64 bound"
    return (f"{name}: fast mode found {len(found)} wrong element(s) (max relative error "
            f"{limit}, |analytic - numeric| / max(|numeric|, {GRAD_ABS_FLOOR:g})): {items}",
            max(worst, max(f.error for f in found)), False)


def case_grads(case, inputs=None, outputs=None, *, seed, places=("CPU",), dtypes=("float64",),
               mode=None, screen=False, **kw) -> list[CheckResult]:
    """check_grad on `case` with its OpTest's tolerances (case.options); `inputs` / `outputs`
    default to case.grad_inputs / case.grad_outputs; `kw`: more of check_grad's keywords.
    `screen`: in the test's grad_mode, else fast mode, and a failure judged again in exact
    mode (fast mode compares directional derivatives: one kink, a max-pool tie, can tip it;
    the per-element mode applies the one-sided kink test and names the wrong elements)."""
    opts = case.options or {}

    def run(mode):
        return check_grad(case, case.grad_inputs if inputs is None else inputs,
                          list(case.grad_outputs) if outputs is None else outputs,
                          case.no_grad_set,
                          max_relative_error=opts.get("max_relative_error", 0.005),
                          numeric_grad_delta=opts.get("numeric_grad_delta", 0.005),
                          mode=mode, places=places, dtypes=dtypes, seed=seed, **kw)

    if not screen:
        return run(mode)
    got = run(opts.get("grad_mode") or "fast")
    if any(r.status == FAIL for r in got) and opts.get("grad_mode") != "exact":
        got = run("exact")
    return got


def check_case(case, context=None) -> list[CheckResult]:
    """The `grad` check of `opkit test` on a Case (what it checks from case.grad_inputs,
    case.grad_outputs, case.no_grad_set and case.options)."""
    if not case.grad_inputs:
        return [CheckResult("grad", SKIP, "", "", case.name, "the case names no gradients")]
    opts = case.options or {}
    outputs = list(case.grad_outputs)
    if not outputs:
        from harness.backend.dispatch import proto as proto_of

        proto = proto_of(case.op_type)
        outputs = [v.name for v in proto.outputs if not v.duplicable and not v.intermediate] \
            if proto is not None else []
    return case_grads(case, outputs=outputs, seed=getattr(context, "seed", DEFAULT_SEED),
                      places=getattr(context, "places", None),
                      dtypes=getattr(context, "dtypes", None), mode=opts.get("grad_mode"),
                      user_defined_grads=opts.get("user_defined_grads"), repro=case_repro(case))


def first_gradient_failure(results) -> str | None:
    """The first failed gradient result's message (without its reproduce line), or None --
    also None when the failure is the op refusing the case's gradients on purpose (explore's
    and coincidences' derived cases judge values, not refusals)."""
    bad = next((r for r in results if r.status == FAIL), None)
    if bad is None:
        return None
    msg = without_repro(bad.message)
    return None if "raised" in msg and "refus" in msg else msg


def without_repro(message: str) -> str:
    """A result's message without its reproduce line (told inside another check's)."""
    return message.split("\nreproduce:")[0]


def told_failure(result, outputs: str) -> str:
    """A failed `output` or `grad` result told in another check's message: what was judged
    (`outputs`, for an output result) and its message without the reproduce line."""
    what = outputs if result.check == "output" else "gradients, analytic against numeric"
    return f"{what}: {without_repro(result.message)}"
