"""`kinks`: at a point where the numeric derivative is one-sided, the analytic gradient
equals one of the one-sided slopes (docs/harness.md, "Input variants"; the one-sided test is
harness.judging.one_sided). Elements where one side is not finite (sqrt at 0: a domain edge) are skipped,
and so are singular points: where the op is not continuous (atan2 at (0, 0): no one-sided
derivative exists) or where the op, or its reference, is not finite or not defined. A NaN or
inf analytic gradient where both one-sided slopes are finite fails at any point, kink or
smooth (a gradient computed as out / x at x = 0: reduce_prod)."""
from __future__ import annotations

import numpy as np

from harness.checks.laws import shared as laws
from harness.checks.base import Check, NonFinite, WrongValue
from harness.judging.compare import fmt_index
from harness.judging.numeric_gradient import NumericEngine
from harness.judging.one_sided import (ACCEPTED, discontinuous, domain_edge, is_kink, kink_verdict,
                           matches, reliable_slopes)
from harness.reporting.messages import raised
from harness.backend.seam import (Combo, grad_outputs, has_grad, make_cotangents, prepare,
                        refusal as opkit_refusal, run as run_case)
from harness.judging.tolerances import grad_tolerance
from harness.reporting.values import fmt_value
from opkit.framework.grad_maker import grad_var_name


class KinksCheck(Check):
    name = "kinks"
    description = "on a kink the analytic gradient equals one of the one-sided slopes"
    order = 140
    variants = ("kinks",)
    needs_float = True

    def applies(self, case, context):
        return None if has_grad(case.op_type) else "the op has no gradient"

    def verdict(self, derived, context):
        def whole(reason):      # the whole case skips (after the plan's own skips)
            return self.plan(derived, context)[1] + [self.skipped(derived.base, reason)]

        case = derived.case
        opts = case.options or {}
        max_rel = float(opts.get("max_relative_error", 0.005))
        delta = float(opts.get("numeric_grad_delta", 0.005))
        try:
            p64 = prepare(case, Combo("CPU", "float64"))
            with np.errstate(all="ignore"):
                outs = p64.forward()
            if any(v is not None and v.dtype.kind == "f" and not np.isfinite(v).all()
                   for v in outs.values()):
                return whole("the op is not finite on the kink points (a domain edge)")
            undefined = _reference_undefined(case)
            if undefined:
                return whole(f"the kink points are singular: {undefined}")
            cot = make_cotangents(outs, grad_outputs(case, outs), seed=context.seed)
            engine = NumericEngine(p64, cot, delta, seed=context.seed)
            slopes, edges, unreliable, singular = {}, 0, [], []
            split = _even_split_points(engine, derived.info.get("cross_ties") or (), delta)
            for name, pts in derived.info["points"].items():
                if name not in engine.base:
                    continue
                for k, what in pts:
                    with np.errstate(all="ignore"):
                        if discontinuous(engine, name, k, delta):
                            singular.append(f"{name} = {what}")   # no one-sided slopes
                            continue
                        got = reliable_slopes(engine, name, k, case, delta)
                    if got is None:     # the slopes move with the step: not judged
                        unreliable.append(f"{name} = {what}")
                        continue
                    left, right = got
                    if domain_edge(left, right):
                        edges += 1    # a domain edge (sqrt at 0), not a kink
                        continue
                    slopes[(name, k)] = (what, left, right)
        except Exception as exc:  # noqa: BLE001
            return whole(f"the op refuses the kink points: "
                         f"{(opkit_refusal(exc) or raised(exc))[:120]}")
        tol64 = grad_tolerance("float64", max_rel)
        if singular and not slopes:
            return whole(f"the kink points are singular, not kinks: the op is not continuous "
                         f"at {', '.join(dict.fromkeys(singular))} (its finite differences "
                         "grow like 1/step; there is no one-sided derivative to judge)")
        if unreliable and not slopes:
            return whole(f"the one-sided slopes cannot be computed reliably at "
                         f"{', '.join(dict.fromkeys(unreliable))} (they move with the step)")
        if edges and not any(is_kink(lt, rt, tol64) for _, lt, rt in slopes.values()):
            return whole(f"no kink to check: {edges} kink point(s) are domain edges (one "
                         "one-sided slope is not finite, e.g. sqrt at 0), the rest smooth")
        return self.compare_each(
            derived, context,
            variant=lambda combo: _quiet_run(case, combo, context),
            compare=lambda _, got, combo: _compare(engine, slopes, got, combo, max_rel, split))


def _reference_undefined(case) -> str | None:
    """Why the case's own reference says the op is undefined at the kink points (a
    non-finite float where the op gave a finite one), or None. A reference that raises says
    nothing (it may not take the case's form: LoD, another signature)."""
    try:
        with np.errstate(all="ignore"):
            want = laws.reference(case, Combo("CPU", "float64"))
    except laws.ReferenceRaised:
        return None
    for s in (s for specs in (want or {}).values() for s in specs):
        arr = np.asarray(s.data)
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            return f"the reference's {s.name} is not finite there"
    return None


def _quiet_run(case, combo, context):
    with np.errstate(all="ignore"):
        return run_case(case, combo, context)


def _even_split_points(engine, cross_ties, delta) -> set:
    """The (input, flat index) of each tie between two inputs where the op is smooth along
    moving both elements together (max(x, y), |x - y|: the kink lies on the plane x = y),
    so the even split is a subgradient there. Where moving both still kinks (relu(x) +
    relu(y) at 0: no tie, two kinks) the point is judged as any other."""
    tol = grad_tolerance("float64", 0.005)
    out = set()
    for name, k, other, at in cross_ties:
        if name not in engine.base or other not in engine.base:
            continue
        with np.errstate(all="ignore"):
            left, right = _diagonal_slopes(engine, name, k, other, at, delta)
        if np.isfinite(left) and np.isfinite(right) and not is_kink(left, right, tol):
            out.add((name, k))
    return out


def _diagonal_slopes(engine, name, k, other, at, delta):
    """(left, right) derivatives of the engine's loss moving element k of `name`, element
    `at` of `other` and every other element of the two holding the same value by the same
    step (Richardson, as one_sided)."""
    spec = engine.specs[other]
    y0 = engine.base[other]
    x0 = engine.base[name]

    v = x0.reshape(-1)[k]
    on_x, on_y = x0 == v, y0 == v   # every element holding the tied value moves: a broadcast
                                    # Y ties with each X element equal to it (max(x, 0.5)
                                    # at integer-valued X)

    def loss(t):
        engine.prepared.set_input(other, (y0 + t * on_y).astype(spec.data.dtype), spec.lod)
        return engine.loss(name, x0 + t * on_x)

    d = float(delta)
    try:
        f0 = loss(0.0)
        f = {s: loss(s) for s in (d, d / 2, -d / 2, -d)}
    finally:
        engine.restore(name)
        engine.restore(other)
    right = 2 * (f[d / 2] - f0) / (d / 2) - (f[d] - f0) / d
    left = 2 * (f0 - f[-d / 2]) / (d / 2) - (f0 - f[-d]) / d
    return float(left), float(right)


def _compare(engine, slopes, got, combo, max_rel, split=frozenset()):
    """None, or (the first kink whose analytic gradient is neither one-sided slope (nor a
    subgradient at an extremum), WrongValue)."""
    tol = grad_tolerance(combo.dtype or "float64", max_rel)
    for (name, k), (what, left, right) in slopes.items():
        ana = got.get(grad_var_name(name))
        if ana is None:
            continue
        a = float(np.asarray(ana, dtype=np.float64).reshape(-1)[k])
        if not np.isfinite(a) and np.isfinite(left) and np.isfinite(right):
            where = fmt_index(grad_var_name(name), np.unravel_index(k, engine.base[name].shape))
            return (f"{where} at {name} = {what}: analytic {fmt_value(a)} where both one-sided "
                    f"slopes are finite: left {fmt_value(left)}, right {fmt_value(right)} (a "
                    "gradient that divides by the input?)", NonFinite)
        if kink_verdict(a, left, right, tol) in (None, *ACCEPTED):
            continue        # no kink there (the `grad` check's business), or a slope matched
        tie = str(what).startswith("tie") and (not str(what).startswith("tie with input ") or
                                               (name, k) in split)
        if tie and matches(a, (left + right) / 2, tol):
            continue        # a tie's gradient split evenly between the two (Paddle's and
                            # PyTorch's amax/max convention): the midpoint subgradient
        where = fmt_index(grad_var_name(name), np.unravel_index(k, engine.base[name].shape))
        return (f"{where} at {name} = {what} (a kink): analytic {fmt_value(a)} is "
                f"neither one-sided slope: left {fmt_value(left)}, right {fmt_value(right)}",
                WrongValue)
    return None


CHECK = KinksCheck()
