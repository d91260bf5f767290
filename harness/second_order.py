"""Judging a gradient computed by running a grad op on its own (double_grad, grad_outputs):
the float64 bound of harness.gradient against exact (coloured) numerics, a one-sided kink
test for the wrong elements, and randomized directional derivatives where the coloured
numerics are too costly. `@GRAD` names are renamed inside the grad op's own scope (RENAMED)
and shown with their own names again."""
from __future__ import annotations

import numpy as np

from harness.compare import fmt_index
from harness.grad_judge import compare_fast
from harness.gradient import compare
from harness.kinks import ACCEPTED, kink_verdict, one_sided
from harness.values import fmt_value

MAX_KINK_PROBES = 1024     # wrong elements probed one-sidedly before giving up


KINK_MATCH_TOL = 1e-4      # an analytic value within this of a one-sided slope matches it


MAX_COLOURS = 16          # exact (coloured) numerics up to this many colours, else ...


EXACT_MAX_ELEMENTS = 4096  # ... (or beyond this size) the randomized directional check


RENAMED = "@G"             # "Out@GRAD" in the grad op's own scope: "Out@G"



def shown_name(name: str) -> str:
    return name.replace(RENAMED, "@GRAD")



def judge_exact(engine, name, ana):
    """(failure message or None, worst error): the float64 bound of harness.gradient.compare;
    wrong elements where the grad op has a kink pass when the analytic value is one of the
    one-sided slopes."""

    if engine.base[name].size > EXACT_MAX_ELEMENTS or \
            engine.discover(name, max_colours=MAX_COLOURS).colours > MAX_COLOURS:
        return False, 0.0
    c = compare(engine, name, ana, None)
    if not c.ok and 0 < c.bad <= MAX_KINK_PROBES:
        left = []
        for k in np.flatnonzero(c.mask.reshape(-1)):
            lo, hi = one_sided(engine, name, int(k))
            if kink_verdict(float(ana.reshape(-1)[k]), lo, hi, KINK_MATCH_TOL) not in ACCEPTED:
                left.append(int(k))
        if not left:
            return None, c.worst
        c = c.restrict(left)
    if c.ok:
        return None, c.worst
    shown = shown_name(name)
    return (f"{shown}: {c.bad} of {c.size} elements wrong; worst {fmt_index(shown, c.index)}: "
            f"analytic {fmt_value(c.analytic)}, numeric {fmt_value(c.numeric)} (error "
            f"{c.error:.4g} > allowed {c.allowed:.3g})", c.worst)



def judge_fast(engine, name, ana):
    """(failure message or None, worst error) from random directional derivatives, a
    disagreeing direction bisected down to the wrong elements (harness.gradient)."""

    msg, worst, _ = compare_fast(engine, name, ana, engine.directions(name, lazy=True), None)
    return (shown_name(msg) if msg else None), worst
