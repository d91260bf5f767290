"""check_grad: analytic gradients (the op's grad maker) against numeric ones (float64).

The loss is `sum(cot * out)` over the checked outputs with a fixed random cotangent
(`harness.runner.make_cotangents`); numeric gradients come from `harness.gradient` (exact
colouring or the randomized fast mode); analytic ones from `PreparedOp.backward` on every
place x float dtype with a kernel. One CheckResult per place x dtype. See docs/gradients.md.
"""
from __future__ import annotations

import os

import numpy as np

from harness.checks.output import (expected_outputs, first_line, fmt_index, prepare_case,
                                   run_combos)
from harness.gradient import (AUTO_EXACT_MAX_ELEMENTS, AUTO_MAX_COLOURS, NumericEngine,
                              relative_error)
from harness.report import FAIL, PASS, SKIP, CheckResult
from harness.runner import make_cotangents, normalize_slots
from harness.tolerances import GRAD_ABS_FLOOR, VACUOUS_ABS, grad_tolerance

__all__ = ["check_grad", "check_case", "resolve_mode", "MODES"]

MODES = ("auto", "exact", "fast", "dense")


def resolve_mode(mode=None) -> str:
    """The mode argument, else $OPKIT_GRAD_MODE, else "auto"."""
    mode = (mode or os.environ.get("OPKIT_GRAD_MODE") or "auto").strip().lower()
    if mode not in MODES:
        raise ValueError(f"unknown gradient check mode {mode!r}: choose from {', '.join(MODES)}")
    return mode


def _numeric_dtype(case) -> str | None:
    from opkit.registry import op_info

    cpu = op_info(case.op_type).kernel_places().get("CPU", [])
    for d in ("float64", "float32"):
        if d in cpu:
            return d
    return None


def check_grad(case, inputs_to_check, output_names, no_grad_set=None,
               max_relative_error=0.005, numeric_grad_delta=0.005, user_defined_grads=None,
               mode=None, repro="", places=None, dtypes=None, seed=2024) -> list[CheckResult]:
    """Analytic against numeric gradients of `inputs_to_check` for the loss over
    `output_names`, on every place x float dtype with a kernel."""
    tail = f"\nreproduce: {repro}" if repro else ""
    op = case.op_type
    if isinstance(inputs_to_check, str):
        inputs_to_check = [inputs_to_check]
    if isinstance(output_names, str):
        output_names = [output_names]
    inputs_to_check, output_names = list(inputs_to_check), list(output_names)
    no_grad = tuple(no_grad_set or ())

    def failed(msg, place="", dtype=""):
        return [CheckResult("grad", FAIL, place, dtype, case.name, f"op '{op}': {msg}{tail}")]

    try:
        mode = resolve_mode(mode)
    except ValueError as exc:
        return failed(str(exc))
    from opkit.registry import op_info

    if op_info(op).grad_maker is None:
        return failed("registers no grad maker: it has no gradient to check")
    both = [n for n in inputs_to_check if n in no_grad]
    if both:
        return failed(f"{', '.join(both)} is both in inputs_to_check and no_grad_set")
    num_dtype = _numeric_dtype(case)
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
    engine = NumericEngine(prepared, cot, numeric_grad_delta, seed=seed)
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
            size = engine.base[name].size
            picked = mode
            if mode == "auto":
                picked = "exact"
                if size > AUTO_EXACT_MAX_ELEMENTS:
                    s = engine.discover(name, max_colours=AUTO_MAX_COLOURS)
                    if s.colours > AUTO_MAX_COLOURS:
                        picked = "fast"
            if picked == "fast":
                fast[name] = engine.directions(name)
            else:
                numeric[name] = engine.exact(name, dense=(picked == "dense"))
            info = engine.info.get(name, {})
            notes.append(f"{name}: {info.get('method', picked)}, "
                         f"{info.get('forward_runs', 0)} forward runs")
    except Exception as exc:  # noqa: BLE001
        return failed(f"computing numeric gradients raised {first_line(exc)}", "CPU", num_dtype)

    # -- analytic side, every place x dtype --------------------------------------------------
    runnable, results = run_combos(case, "grad", places, dtypes)
    outs_list = ", ".join(output_names)
    for place, dtype in runnable:
        where = f"op '{op}' on {place}" + (f" {dtype}" if dtype else "")
        tol = grad_tolerance(dtype or num_dtype, max_relative_error)
        try:
            p = prepare_case(case, place, dtype, expected)
            run_outs = p.forward()
            cot_run = {n: c.astype(run_outs[n].dtype) for n, c in cot.items()}
            analytic = p.backward(cot_run, inputs_to_check, no_grad)
        except Exception as exc:  # noqa: BLE001
            results.append(CheckResult("grad", FAIL, place, dtype, case.name,
                                       f"{where}: the grad op raised {first_line(exc)}{tail}"))
            continue
        problems, vacuous, worst = [], [], 0.0
        for name in inputs_to_check:
            ana = analytic.get(name)
            if ana is None:
                problems.append(f"no analytic gradient of {name} (the grad ops did not "
                                f"produce {name}@GRAD)")
                continue
            ana = np.asarray(ana, dtype=np.float64)
            shape = engine.base[name].shape
            if ana.shape != shape:
                problems.append(f"gradient of {name} has shape {ana.shape}, expected {shape}")
                continue
            if name in numeric:
                msg, w, vac = _compare_exact(name, ana, numeric[name], tol,
                                             engine if user_defined_grads is None else None)
            else:
                msg, w, vac = _compare_fast(engine, name, ana, fast[name], tol)
            worst = max(worst, w)
            if msg:
                problems.append(msg)
            elif vac:
                vacuous.append(name)
        if problems:
            results.append(CheckResult(
                "grad", FAIL, place, dtype, case.name,
                f"{where}: gradient w.r.t. outputs {outs_list}: " + "; ".join(problems) + tail,
                worst))
        else:
            msg = ""
            if vacuous:
                msg = "; ".join(f"vacuous: numeric gradient of {n} is zero everywhere (the "
                                f"check proves nothing)" for n in vacuous)
            results.append(CheckResult("grad", PASS, place, dtype, case.name, msg, worst))
    if not any(r.status != SKIP for r in results):
        return results
    # how the numeric side was computed (kept on the first result for the report)
    for r in results:
        if r.status == PASS and not r.message and notes:
            r.message = f"numeric ({num_dtype}): " + "; ".join(notes)
            break
    return results


MAX_KINK_PROBES = 64   # elements over tolerance probed one-sidedly before giving up


def _compare_exact(name, ana, num, tol, engine=None):
    """(failure message or None, worst error, vacuous). Elements over tolerance where the
    one-sided slopes disagree (a kink) pass when the analytic value equals one of them
    (harness.kinks); never when it equals neither."""
    if ana.size == 0:
        return None, 0.0, False
    err = relative_error(ana, num)
    err = np.where(np.isnan(err), np.inf, err)
    over = np.flatnonzero(err.reshape(-1) > tol)
    if engine is not None and 0 < over.size <= MAX_KINK_PROBES:
        from harness.kinks import kink_verdict, one_sided

        err = err.copy()
        for k in over:
            left, right = one_sided(engine, name, int(k))
            side = kink_verdict(float(ana.reshape(-1)[k]), left, right, tol)
            if side in ("left", "right"):
                err.reshape(-1)[k] = 0.0   # the analytic value is one of the one-sided slopes
    worst = float(err.max())
    vacuous = float(np.abs(num).max()) <= VACUOUS_ABS
    if worst <= tol:
        return None, worst, vacuous
    bad = err > tol
    k = int(np.argmax(err))
    idx = np.unravel_index(k, ana.shape)
    a, n = float(ana.reshape(-1)[k]), float(num.reshape(-1)[k])
    extra = (" (the numeric gradient is zero everywhere: the analytic one should be too)"
             if vacuous else "")
    return (f"{name}: {int(bad.sum())} of {bad.size} elements exceed max relative error "
            f"{tol:g}; worst {fmt_index(name, idx)}: analytic {a!r}, numeric {n!r}, error "
            f"{err.reshape(-1)[k]:.4g} (|analytic - numeric| / max(|numeric|, "
            f"{GRAD_ABS_FLOOR:g})){extra}", worst, vacuous)


def _compare_fast(engine, name, ana, directions, tol):
    worst, bad_u = 0.0, None
    for u, d in directions:
        e = engine.direction_error(u, ana, d)
        if e > worst:
            worst = e
        if e > tol and bad_u is None:
            bad_u = (u, d, e)
    vacuous = all(abs(d) <= VACUOUS_ABS for _, d in directions) and \
        all(abs(float((ana * u).sum())) <= VACUOUS_ABS for u, _ in directions)
    if bad_u is None:
        return None, worst, vacuous
    u, d, e = bad_u
    found = engine.localize(name, ana, u, tol)
    if not found:
        return (f"{name}: directional derivative along a random direction: analytic "
                f"{float((ana * u).sum())!r}, numeric {d!r}, error {e:.4g} > {tol:g} (fast "
                f"mode could not localize it to single elements; rerun with mode='exact')",
                worst, False)
    items = ", ".join(f"{fmt_index(name, f.index)}: analytic {f.analytic!r}, numeric "
                      f"{f.numeric!r}, error {f.error:.4g}" for f in found)
    return (f"{name}: fast mode found {len(found)} wrong element(s) (max relative error "
            f"{tol:g}, |analytic - numeric| / max(|numeric|, {GRAD_ABS_FLOOR:g})): {items}",
            max(worst, max(f.error for f in found)), False)


def check_case(case, context=None) -> list[CheckResult]:
    """The `grad` check of `opkit test` on a Case (what it checks from case.grad_inputs,
    case.grad_outputs, case.no_grad_set and case.options)."""
    if not case.grad_inputs:
        return [CheckResult("grad", SKIP, "", "", case.name, "the case names no gradients")]
    opts = case.options or {}
    outputs = list(case.grad_outputs)
    if not outputs:
        from opkit.registry import op_info

        proto = op_info(case.op_type).proto
        outputs = [v.name for v in proto.outputs if not v.duplicable and not v.intermediate] \
            if proto is not None else []
    places = getattr(context, "places", None) if context is not None else None
    dtypes = getattr(context, "dtypes", None) if context is not None else None
    seed = getattr(context, "seed", 2024) if context is not None else 2024
    repro = opts.get("repro") or (f"opkit test {case.op_type} --tests "
                                  f"{case.source.split('::')[0]}" if case.source else "")
    return check_grad(case, case.grad_inputs, outputs, case.no_grad_set,
                      max_relative_error=opts.get("max_relative_error", 0.005),
                      numeric_grad_delta=opts.get("numeric_grad_delta", 0.005),
                      user_defined_grads=opts.get("user_defined_grads"),
                      mode=opts.get("grad_mode"), repro=repro, places=places, dtypes=dtypes,
                      seed=seed)
