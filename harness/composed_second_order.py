"""The second-order judgement of a grad op with the forward outputs it reads recomputed.

`double_grad` differentiates a grad op with each input varied on its own (Out apart from
X). A grad maker may instead give the *total* derivative through the forward op: elu_grad
reads X and Out, and Paddle's elu double-grad op folds d/dOut into X's gradient (Out =
elu(X)) and gives no Out gradient; batch_norm's folds SavedMean and SavedVariance into X's.
Both are right where the grad op is used, on Out = f(X). `judge(...)` checks that reading:

    h(z) = sum(cot2 * grad_op(z, O = forward(z)))

over z = the grad op's other float inputs and the forward op's differentiable float
inputs, every forward output O the grad op reads recomputed by the forward op. Numeric:
central differences of h, one element at a time (float64; at a kink either one-sided
difference is accepted). Analytic: the double-grad ops'
gradient of each z plus, for a forward output O they give a gradient of, that gradient
pulled back through the forward op (its first-order backward with cotangent dO). A maker
that leaves a term out (tanh's without DOutNew) is still wrong here: X's total derivative
through Out is then missing.
"""
from __future__ import annotations

import numpy as np

__all__ = ["judge", "STEP", "RTOL", "ATOL", "MAX_ELEMENTS"]

STEP = 1e-6         # central-difference step, relative to max(1, |value|)
RTOL = 1e-5
ATOL = 1e-6
MAX_ELEMENTS = 2048  # perturbed elements in all; a larger case is not judged this way


def _float(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size > 0


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= ATOL + RTOL * max(abs(a), abs(b))


def judge(fwd, g, cot2: dict, analytic: dict, fixed=frozenset()):
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
    if sum(v.size for v in base.values()) > MAX_ELEMENTS:
        return False
    fwd_lod = {n: fwd.lod_lengths(n) or None for n in fwd.input_names()}
    g_lod = {n: g.lod_lengths(n) or None for n in g_in}

    def h(values: dict) -> float:
        for n in fwd_vars:
            fwd.set_input(n, values[n], fwd_lod.get(n))
        outs = fwd.forward()
        for o in outs_read:
            g.set_input(o, np.array(outs[o]), g_lod.get(o))
        for n in g_vars:
            g.set_input(n, values[n], g_lod.get(n))
        if any(n in values for n in g_in if n in fwd_vars):   # X read by both
            for n in g_in:
                if n in fwd_vars:
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
                step = STEP * max(1.0, abs(x0))
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
