"""Judging a gradient computed by running a grad op on its own (double_grad, grad_outputs):
`judge_exact` (coloured numerics, float64 bound, one-sided kink test), `judge_fast`
(randomized directional derivatives) and `judge_composed` (the grad op with the forward
outputs it reads recomputed: docs/harness.md, `double_grad`, "Total derivatives"). `@GRAD`
names are renamed inside the grad op's own scope (RENAMED) and shown with their own names.
"""
from __future__ import annotations

import numpy as np

from harness.judging.compare import fmt_index
from harness.judging.grad_judge import compare_fast, exact_verdict
from harness.reporting.values import fmt_value

MAX_KINK_PROBES = 1024     # wrong elements probed one-sidedly before giving up
MAX_COLOURS = 16           # exact (coloured) numerics up to this many colours, else ...
EXACT_MAX_ELEMENTS = 4096  # ... (or beyond this size) the randomized directional check
RENAMED = "@G"             # "Out@GRAD" in the grad op's own scope: "Out@G"
COMPOSED_STEP = 1e-6       # judge_composed: central-difference step, relative to max(1, |value|)
COMPOSED_RTOL = 1e-5
COMPOSED_ATOL = 1e-6
COMPOSED_MAX_ELEMENTS = 2048   # perturbed elements in all; a larger case is not judged this way


def shown_name(name: str) -> str:
    return name.replace(RENAMED, "@GRAD")


def judge_exact(engine, name, ana):
    """(failure message or None, worst error): the float64 bound of harness.judging.numeric_gradient.compare;
    wrong elements where the grad op has a kink pass when the analytic value is one of the
    one-sided slopes."""
    if engine.base[name].size > EXACT_MAX_ELEMENTS or \
            engine.discover(name, max_colours=MAX_COLOURS).colours > MAX_COLOURS:
        return False, 0.0
    # every wrong element up to MAX_KINK_PROBES probed, by its one-sided slopes only
    c, passed = exact_verdict(engine, name, ana, probes=MAX_KINK_PROBES, each=MAX_KINK_PROBES,
                              local=False)
    if passed:
        return None, c.worst
    shown = shown_name(name)
    return (f"{shown}: {c.bad} of {c.size} elements wrong; worst {fmt_index(shown, c.index)}: "
            f"analytic {fmt_value(c.analytic)}, numeric {fmt_value(c.numeric)} (error "
            f"{c.error:.4g} > allowed {c.allowed:.3g})", c.worst)


def judge_fast(engine, name, ana):
    """(failure message or None, worst error) from random directional derivatives, a
    disagreeing direction bisected down to the wrong elements (harness.judging.numeric_gradient)."""
    msg, worst, _ = compare_fast(engine, name, ana, engine.directions(name, lazy=True), None)
    return (shown_name(msg) if msg else None), worst


def _float(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size > 0


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= COMPOSED_ATOL + COMPOSED_RTOL * max(abs(a), abs(b))


def judge_composed(fwd, g, cot2: dict, analytic: dict, fixed=frozenset()):
    """(None: every total derivative agrees | a message naming the first that does not |
    False: cannot be judged this way) for grad op `g` run on the values of forward op `fwd`.
    `analytic`: {g input: its gradient from the double-grad ops, None where none}."""
    g_in = g.input_names()
    outs_read = [n for n in g_in if n in set(fwd.output_names())]
    if not outs_read:
        return False
    fwd_vars = [n for n in fwd.input_names() if n not in fixed and _float(fwd.array(n))]
    g_vars = [n for n in g_in if n not in outs_read and n not in fixed and _float(g.array(n))]
    names = list(dict.fromkeys(fwd_vars + g_vars))
    base = {n: np.array(fwd.array(n) if n in fwd_vars else g.array(n), dtype=np.float64)
            for n in names}
    if sum(v.size for v in base.values()) > COMPOSED_MAX_ELEMENTS:
        return False
    fwd_lod = {n: fwd.lod_lengths(n) or None for n in fwd.input_names()}
    g_lod = {n: g.lod_lengths(n) or None for n in g_in}

    def h(values: dict) -> float:
        for n in fwd_vars:
            fwd.set_input(n, values[n], fwd_lod.get(n))
        outs = fwd.forward()
        for o in outs_read:
            g.set_input(o, np.array(outs[o]), g_lod.get(o))
        for n in g_in:
            if n in g_vars or n in fwd_vars:        # (fwd_vars: X read by both)
                g.set_input(n, values[n], g_lod.get(n))
        got = g.forward()
        return float(sum(np.sum(np.asarray(got[k], np.float64) * c) for k, c in cot2.items()
                         if got.get(k) is not None))

    # analytic totals: the direct gradients, plus dO pulled back through the forward op
    total = {n: np.zeros_like(base[n]) for n in names}
    for n in names:
        if n in g_in and analytic.get(n) is not None:
            total[n] += np.asarray(analytic[n], np.float64).reshape(base[n].shape)
    pulled = {o: analytic.get(o) for o in outs_read if analytic.get(o) is not None}
    try:
        if pulled and fwd_vars:
            fwd.forward()
            back = fwd.backward({o: np.asarray(v) for o, v in pulled.items()}, fwd_vars)
            for n in fwd_vars:
                if back.get(n) is not None:
                    total[n] += np.asarray(back[n], np.float64).reshape(base[n].shape)
        values = {n: v.copy() for n, v in base.items()}
        at = h(values)
        for n in names:
            flat = values[n].reshape(-1)
            ana = total[n].reshape(-1)
            num = np.zeros(flat.size)
            bad = np.zeros(flat.size, bool)
            for k in range(flat.size):
                x0 = flat[k]
                step = COMPOSED_STEP * max(1.0, abs(x0))
                flat[k] = x0 + step
                up = h(values)
                flat[k] = x0 - step
                down = h(values)
                flat[k] = x0
                num[k] = (up - down) / (2 * step)
                # at a kink (elu at 0) either one-sided slope is an accepted value
                bad[k] = not any(_close(ana[k], d) for d in
                                 (num[k], (up - at) / step, (at - down) / step))
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                return (f"{n}: {int(bad.sum())} of {bad.size} elements wrong with "
                        f"{', '.join(outs_read)} recomputed from the forward inputs; first "
                        f"at flat index {k}: analytic {ana[k]:.6g}, numeric {num[k]:.6g}")
        return None
    finally:
        h(base)      # the base values back in both ops
