"""`output` and `grad` as registered checks: the bridge to OpTest.

When the case came from an OpTest class, its own `test_*` methods run once (inside
`harness.report.collecting()`), so the test author's tolerances and arguments apply; their
CheckResults are split into `output` and `grad`. A `test_*` method that raises outside a
check_* call is a failed result (check `grad` when its name says grad, else `output`).

A case without an OpTest (made by hand or by --fuzz) is checked directly with the case's
expected outputs (and, when it names gradients, numeric gradients), through
`harness.checks.output` / `harness.checks.grad` when they provide `check_case`, else with a
small built-in comparison.
"""
from __future__ import annotations

import unittest

import numpy as np

from harness.checks._support import (CheckContext, combos, fail, fmt_index, pass_, prepare,
                                     run_forward_backward)
from harness.report import FAIL, SKIP, CheckResult, collecting
from harness.runner import normalize_slots

__all__ = ["check_output", "check_grad", "run_optest_methods"]


def run_optest_methods(test, case_name: str) -> list[CheckResult]:
    """Run every test_* method of an OpTest instance, collecting its CheckResults."""
    results: list[CheckResult] = []
    names = sorted(n for n in dir(type(test)) if n.startswith("test") and
                   callable(getattr(type(test), n, None)))
    for method in names:
        with collecting() as collected:
            try:
                getattr(test, method)()
                error = None
            except unittest.SkipTest as exc:
                error = ("skip", str(exc))
            except Exception as exc:  # noqa: BLE001: reported as a failed check
                error = ("fail", f"{type(test).__name__}.{method} raised "
                                 f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        for r in collected:
            if not r.case:
                r.case = case_name
        results.extend(collected)
        if error is not None:
            check = "grad" if "grad" in method else "output"
            results.append(CheckResult(check, FAIL if error[0] == "fail" else SKIP, "", "",
                                       case_name, error[1]))
    return results


def _from_test(case, context: CheckContext, check: str):
    cache = context.cache
    if "optest" not in cache:
        cache["optest"] = run_optest_methods(context.test, case.name)
    got = [r for r in cache["optest"] if r.check == check]
    if not got:
        what = "check_output()" if check == "output" else "check_grad()"
        return [CheckResult(check, SKIP, "", "", case.name,
                            f"{type(context.test).__name__} never calls {what}")]
    return got


def _delegate(module: str, case, context):
    try:
        mod = __import__(module, fromlist=["check_case"])
    except ImportError:
        return None
    fn = getattr(mod, "check_case", None)
    return fn(case, context) if fn is not None else None


def check_output(case, context: CheckContext) -> list:
    if context.test is not None:
        return _from_test(case, context, "output")
    delegated = _delegate("harness.checks.output", case, context)
    if delegated is not None:
        return delegated
    return builtin_output(case, context)


def check_grad(case, context: CheckContext) -> list:
    if context.test is not None:
        return _from_test(case, context, "grad")
    delegated = _delegate("harness.checks.grad", case, context)
    if delegated is not None:
        return delegated
    return builtin_grad(case, context)


# -- built-in fallbacks (cases without an OpTest) -----------------------------------------
def _tolerance(case, dtype):
    atol = case.options.get("atol")
    rtol = case.options.get("rtol")
    if atol is None:
        atol = 1e-5 if dtype == "float32" else 1e-7
    if rtol is None:
        rtol = 1e-4 if dtype == "float32" else 1e-7
    return float(atol), float(rtol)


def builtin_output(case, context: CheckContext) -> list:
    expected = normalize_slots(case.outputs)
    if not expected:
        return [CheckResult("output", SKIP, "", "", case.name, "the case has no outputs")]
    runnable, results = combos(case, context, "output")
    for combo in runnable:
        prepared = prepare(case, combo)
        try:
            prepared.forward()
        except Exception as exc:
            results.append(fail("output", combo, case, str(exc).splitlines()[0]))
            continue
        atol, rtol = _tolerance(case, combo.dtype)
        worst, problem = 0.0, None
        for slot, specs in expected.items():
            if slot in (case.no_check_set or ()):
                continue
            for spec in specs:
                got = prepared.array(spec.name)
                want = np.asarray(spec.data)
                if got is None:
                    problem = problem or f"{spec.name}: not produced"
                    continue
                if got.shape != want.shape:
                    problem = problem or f"{spec.name}: shape {got.shape}, expected {want.shape}"
                    continue
                if spec.lengths is not None:
                    lod = prepared.lod_lengths(spec.name)
                    if [list(x) for x in lod or []] != [list(x) for x in spec.lengths]:
                        problem = problem or (f"{spec.name}: LoD {lod}, expected "
                                              f"{spec.lengths}")
                if want.dtype.kind in "fc":
                    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
                    if err.size:
                        worst = max(worst, float(np.nanmax(err)))
                    bad = ~np.isclose(got, want, atol=atol, rtol=rtol)
                    if bad.any() and problem is None:
                        idx = np.unravel_index(int(np.flatnonzero(bad)[0]), want.shape)
                        problem = (f"{fmt_index(spec.name, idx)}: got {got[idx].item()!r}, "
                                   f"expected {want[idx].item()!r} (atol {atol}, rtol {rtol})")
                elif not np.array_equal(got, want) and problem is None:
                    problem = f"{spec.name}: differs from the expected output"
        results.append(fail("output", combo, case, problem, worst) if problem else
                       CheckResult("output", "pass", combo.place, combo.dtype, case.name, "",
                                   worst))
    return results


def builtin_grad(case, context: CheckContext) -> list:
    from harness.checks._support import Combo, has_grad

    if not case.grad_inputs:
        return [CheckResult("grad", SKIP, "", "", case.name, "the case names no gradients")]
    if not has_grad(case.op_type):
        return [CheckResult("grad", FAIL, "", "", case.name,
                            f"op '{case.op_type}' registers no grad maker")]
    combo = Combo("CPU", "float64")
    max_rel = float(case.options.get("max_relative_error", 0.005))
    delta = float(case.options.get("numeric_grad_delta", 0.005))
    try:
        prepared = prepare(case, combo)
        analytic = run_forward_backward(prepared, case, seed=context.seed)
        outs = {n: v for n, v in analytic.items() if not n.endswith("@GRAD")}
        from harness.runner import make_cotangents

        from harness.checks._support import grad_outputs
        names = grad_outputs(case, outs)
        cot = make_cotangents(outs, names, seed=context.seed)

        def loss(p):
            o = p.forward()
            return sum(float(np.sum(o[n].astype(np.float64) * cot[n])) for n in cot)

        specs = {s.name: s for ss in prepared.inputs.values() for s in ss}
        worst, problem = 0.0, None
        for name in case.grad_inputs:
            base = np.array(specs[name].data, dtype=np.float64)
            num = np.zeros_like(base)
            for i in range(base.size):
                for sign in (1, -1):
                    x = base.copy()
                    x.reshape(-1)[i] += sign * delta
                    prepared.set_input(name, x, specs[name].lod)
                    num.reshape(-1)[i] += sign * loss(prepared) / (2 * delta)
            prepared.set_input(name, base, specs[name].lod)
            ana = analytic.get(name + "@GRAD")
            if ana is None:
                problem = problem or f"{name}: no analytic gradient"
                continue
            denom = np.maximum(np.abs(num), 1e-3)
            rel = np.abs(ana - num) / denom
            worst = max(worst, float(rel.max()) if rel.size else 0.0)
            if rel.size and rel.max() > max_rel and problem is None:
                idx = np.unravel_index(int(np.argmax(rel)), rel.shape)
                problem = (f"{fmt_index(name, idx)}: analytic {float(ana[idx])!r} numeric "
                           f"{float(num[idx])!r} (relative error {rel[idx]:.3g} > {max_rel})")
    except Exception as exc:
        return [fail("grad", combo, case, str(exc).splitlines()[0])]
    return [fail("grad", combo, case, problem, worst) if problem else
            CheckResult("grad", "pass", "CPU", "float64", case.name, "", worst)]
