"""Numeric gradients, fast: Jacobian colouring (exact mode) and randomized directional
checks with bisection (fast mode). See docs/gradients.md.

Everything runs the forward op directly, prepared once, in a reused scope
(`PreparedOp.set_input` + `forward`); inputs are float64. The quantity differentiated is
the scalar loss `L(x) = sum_o cot[o] * out[o]` over the checked outputs, with a fixed random
cotangent.

Exact mode
    1. Discovery (about 2*log2(N) forward runs): for each axis `a` of the input and each bit
       `b` of the index along `a`, perturb (by random positive amounts) the elements whose
       index has bit b set, then those whose bit is clear, and record which outputs change.
       When no output changes in both runs for every bit, axis `a` is *separating*: elements
       whose indices differ along `a` touch disjoint outputs; and the runs spell out, for
       every output, the index along `a` of the one element row that owns it.
    2. Colouring: elements that agree on every non-separating axis share a colour (an
       elementwise op has 1 colour, row-wise softmax one per column, `mul`'s X one per
       column of X). One central-difference pair per colour gives every column of the
       Jacobian in it; each output's change is credited to its owner element.
    3. A random directional spot check of the result (2 runs); any inconsistency (an output
       changes that no element owns, a failed spot check) falls back to the dense
       per-element loop (Paddle's algorithm, 2N runs).
Fast mode
    Random directions u (random signs) split into random blocks;
    per block, the numeric directional derivative (L(x+du) - L(x-du)) / 2d against the
    analytic g.u. A block that disagrees is bisected (halves of its support, recursively)
    down to single elements, which are then reported like exact mode does.

Soundness (float64 numerics)
    * Step: each element gets its own step `h_i = delta * clip(|x_i|, STEP_SCALE_MIN, 1)`,
      so the step shrinks with the input's scale (a log-loss at x = 0.02 gets 1e-4, not
      0.005; a point near 0 of sqrt/log/reciprocal is not stepped across its domain edge).
    * Richardson: every central difference is taken at h and h/2, and the result is
      `(4 D(h/2) - D(h)) / 3` (error O(h^4)); `|D(h/2) - D(h)| / 3` plus a roundoff term
      `eps * sum|cot * out| / h` is the engine's per-element error estimate (`errors`).
    * Bound: float64 analytic gradients must agree within `float64_bound` (a floor of
      F64_RTOL = 1e-6 plus ERROR_FACTOR times the estimate), orders of magnitude below
      Paddle's 0.005; float32 ones keep the test's `max_relative_error`.
    * Confirmation: a mismatch is recomputed with steps CONFIRM_FACTOR (1/10) as large
      (`refined`); only elements wrong at both steps are reported (`compare`).
Float32 numerics (an op with no float64 CPU kernel) keep the fixed step `delta`.
"""
from __future__ import annotations

from harness.options import DEFAULT_SEED  # noqa: I001

import math

import numpy as np

from harness.tolerances import GRAD_ABS_FLOOR

__all__ = ["NumericEngine", "Structure", "Finding", "Comparison", "AUTO_EXACT_MAX_ELEMENTS",
           "AUTO_MAX_COLOURS", "FAST_DIRECTIONS", "FAST_BLOCKS", "F64_RTOL", "ERROR_FACTOR",
           "CONFIRM_FACTOR", "STEP_SCALE_MIN", "relative_error", "float64_bound", "compare"]

AUTO_EXACT_MAX_ELEMENTS = 4096   # auto: exact up to this many elements per input ...
AUTO_MAX_COLOURS = 64            # ... and beyond it when the colouring needs <= this many colours
FAST_DIRECTIONS = 1              # fast mode: random directions ...
FAST_BLOCKS = 16                 # ... each split into this many random blocks
MAX_REPORTED = 5                 # fast mode: elements localized per failing check
STEP_SCALE_MIN = 0.01            # step h_i = delta * clip(|x_i|, STEP_SCALE_MIN, 1) (float64)
F64_RTOL = 1e-6                  # float64 bound: relative floor (roundoff of the analytic side)
ERROR_FACTOR = 2.0               # ... plus this many times the engine's error estimate
CONFIRM_FACTOR = 0.1             # a mismatch is recomputed with steps this much smaller
CONFIRM_MAX = 8                  # ... element by element for the worst this many elements
_EPS = {"float64": float(np.finfo(np.float64).eps), "float32": float(np.finfo(np.float32).eps)}


def relative_error(analytic, numeric, floor: float = GRAD_ABS_FLOOR):
    """Paddle's `_assert_is_close` metric: |a - n| / max(|n|, floor)."""
    analytic = np.asarray(analytic, dtype=np.float64)
    numeric = np.asarray(numeric, dtype=np.float64)
    return np.abs(analytic - numeric) / np.maximum(np.abs(numeric), floor)


def _axis_index(shape, axis):
    """The index along `axis` of every element, as an array that broadcasts over `shape`
    (np.indices(shape)[axis] without materializing it)."""
    view = [1] * len(shape)
    view[axis] = shape[axis]
    return np.arange(shape[axis]).reshape(view)


def _signs(rng, shape):
    """= rng.choice([-1.0, 1.0], shape), the same draws bit for bit (choice draws
    integers(0, 2)), without choice's own overhead."""
    return _SIGNS[rng.integers(0, 2, shape)]


_SIGNS = np.array([-1.0, 1.0])


def _differs(f0, f):
    """NumericEngine._changed for base outputs without a NaN: where f is not f0."""
    return f != f0


class Structure:
    """What discovery found for one input: separating axes and each output's owner."""

    def __init__(self, shape, separating, owners):
        self.shape = tuple(shape)
        self.separating = tuple(separating)       # axes
        self.owners = owners                      # axis -> int array over outputs (-1: none)
        self.free_axes = tuple(a for a in range(len(shape)) if a not in separating)
        self.colours = int(np.prod([shape[a] for a in self.free_axes])) if self.free_axes else 1
        self.complete = True

    def __repr__(self):
        return (f"Structure(shape={self.shape}, separating={self.separating}, "
                f"colours={self.colours})")


class Finding:
    """One wrong gradient element: where, analytic, numeric and the error."""

    def __init__(self, index, analytic, numeric, error):
        self.index, self.analytic, self.numeric, self.error = index, analytic, numeric, error


class NumericEngine:
    """Numeric derivatives of L(x) = sum(cot * out) for one PreparedOp (float64, or float32
    for an op without a float64 CPU kernel).

    `exact(name)` / `directions(name)` / `element(name, i)` give the numeric values (Richardson
    extrapolated over steps h and h/2 in float64); `errors[name]` holds the per-element error
    estimate of the last `exact`; `refined(name)` recomputes with steps CONFIRM_FACTOR as
    large; `compare(...)` (module function) turns them into a verdict."""

    def __init__(self, prepared, cotangents: dict, delta: float = 0.005, seed: int = DEFAULT_SEED,
                 adaptive: bool | None = None):
        self.prepared = prepared
        self.order = [n for n in prepared.output_names() if n in cotangents]
        self.cot = np.concatenate([np.asarray(cotangents[n], np.float64).reshape(-1)
                                   for n in self.order]) if self.order else np.zeros(0)
        self.delta = float(delta)
        self.seed = seed
        self.forward_runs = 0
        self.specs = {s.name: s for specs in prepared.inputs.values() for s in specs}
        self.base = {n: np.array(s.data, dtype=np.float64) for n, s in self.specs.items()
                     if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f"}
        self.info: dict[str, dict] = {}
        self.errors: dict[str, np.ndarray] = {}      # name -> error estimate of exact()
        self.adaptive = adaptive
        self._f0 = None
        self._structures: dict[str, Structure | None] = {}
        self._refined: dict[str, tuple] = {}
        self._exact: dict[str, tuple] = {}

    # -- steps ------------------------------------------------------------------------------
    def is_float64(self, name: str) -> bool:
        return np.dtype(self.specs[name].data.dtype) == np.float64

    def _adaptive(self, name: str) -> bool:
        return self.is_float64(name) if self.adaptive is None else bool(self.adaptive)

    def steps(self, name: str, factor: float = 1.0) -> np.ndarray:
        """The per-element step of input `name` (float64: scaled by |x|; float32: delta)."""
        x0 = self.base[name]
        if not self._adaptive(name):
            return np.full(x0.shape, self.delta * factor)
        return self.delta * factor * np.clip(np.abs(x0), STEP_SCALE_MIN, 1.0)

    def _eps(self, name: str) -> float:
        return _EPS["float64"] if self.is_float64(name) else _EPS["float32"]

    def _richardson(self, name: str) -> bool:
        return self._adaptive(name)

    # -- running ----------------------------------------------------------------------------
    def outputs(self, name: str, x: np.ndarray) -> np.ndarray:
        """The checked outputs (flattened, concatenated, float64) with input `name` = x."""
        spec = self.specs[name]
        self.prepared.set_input(name, np.asarray(x).astype(spec.data.dtype, copy=False),
                                spec.lod)
        outs = self.prepared.forward()
        self.forward_runs += 1
        parts = []
        for n in self.order:
            v = outs.get(n)
            if v is None:
                raise RuntimeError(f"output '{n}' was not produced")
            parts.append(np.asarray(v, dtype=np.float64).reshape(-1))
        if len(parts) == 1:  # a copy, as np.concatenate makes (the op may reuse its buffer)
            return np.array(parts[0])
        return np.concatenate(parts) if parts else np.zeros(0)

    def restore(self, name: str) -> None:
        spec = self.specs[name]
        self.prepared.set_input(name, self.base[name].astype(spec.data.dtype), spec.lod)

    def base_outputs(self, name: str) -> np.ndarray:
        f0 = self.outputs(name, self.base[name])
        if self._f0 is not None and f0.shape != self._f0.shape:
            raise RuntimeError("the outputs changed size between runs")
        self._f0 = f0
        return f0

    def loss(self, name: str, x: np.ndarray) -> float:
        return float(np.dot(self.cot, self.outputs(name, x)))

    def _pair(self, name, step):
        """(outputs at x0 + step, outputs at x0 - step)."""
        x0 = self.base[name]
        return self.outputs(name, x0 + step), self.outputs(name, x0 - step)

    def directional_estimate(self, name: str, u: np.ndarray, scale: float = 1.0):
        """(numeric derivative of L along u, error estimate). Float64: Richardson over the
        steps t and t/2 with t = delta * scale * clip(rms |x| on u's support, ...)."""
        x0 = self.base[name]
        u = np.asarray(u, np.float64)
        t = self.delta * scale
        if self._adaptive(name):
            sup = u != 0
            mag = float(np.abs(x0[sup]).min()) if sup.any() else 1.0
            t *= float(np.clip(mag, STEP_SCALE_MIN, 1.0))
        try:
            fp, fm = self._pair(name, t * u)
            d1 = float(np.dot(self.cot, fp - fm)) / (2 * t)
            rnd = self._eps(name) * float(np.dot(np.abs(self.cot), np.abs(fp) + np.abs(fm))) \
                / (2 * t)
            if not self._richardson(name):
                return d1, rnd
            fp, fm = self._pair(name, 0.5 * t * u)
            d2 = float(np.dot(self.cot, fp - fm)) / t
        finally:
            self.restore(name)
        r = (4 * d2 - d1) / 3
        return r, abs(d2 - d1) / 3 + 3 * rnd

    def directional(self, name: str, u: np.ndarray) -> float:
        """The numeric derivative of L along u (see directional_estimate)."""
        return self.directional_estimate(name, u)[0]

    # -- exact mode -------------------------------------------------------------------------
    def discover(self, name: str, max_colours: int | None = None) -> Structure:
        """Separating axes of input `name` and every output's owner along them.

        First one bit per axis (2 runs each) rules out the axes that obviously overlap; with
        `max_colours`, discovery stops there when the colouring would need more colours
        (the Structure is then marked incomplete: good for the auto decision only)."""
        cached = self._structures.get(name)
        if cached is not None and (cached.complete or max_colours is not None):
            return cached
        x0 = self.base[name]
        start = self.forward_runs
        try:
            f0 = self.base_outputs(name)
            rng = np.random.default_rng(self.seed)
            bump = rng.uniform(0.5, 1.5, x0.shape) * self.delta
            # x0 + bump * mask, bit for bit, as a choice between two arrays made once
            # (x0 + 0.0: an unperturbed -0.0 becomes +0.0, as x0 + bump * False does)
            probe = (f0, x0 + bump, x0 + 0.0, bool(np.isnan(f0).any()))
            state = {}
            for a, size in enumerate(x0.shape):     # phase 1: bit 0 of every axis
                if size > 1:
                    state[a] = self._probe_bit(name, probe, _axis_index(x0.shape, a), 0,
                                               np.zeros(f0.shape, np.int64),
                                               np.ones(f0.shape, bool))
            free = [a for a, st in state.items() if st is None]
            colours = int(np.prod([x0.shape[a] for a in free])) if free else 1
            complete = True
            if max_colours is not None and colours > max_colours:
                complete = False
            else:                                   # phase 2: the other bits
                for a, st in state.items():
                    size = x0.shape[a]
                    for b in range(1, int(math.ceil(math.log2(size)))):
                        if st is None:
                            break
                        st = self._probe_bit(name, probe, _axis_index(x0.shape, a), b, *st)
                    state[a] = st
            separating, owners = [], {}
            for a, size in enumerate(x0.shape):
                if size == 1:
                    separating.append(a)
                    owners[a] = np.zeros(f0.shape, np.int64)
                elif state[a] is not None:
                    separating.append(a)
                    owner, seen_all = state[a]
                    owners[a] = np.where(seen_all, owner, -1)
            structure = Structure(x0.shape, separating, owners)
            structure.complete = complete
        finally:
            self.restore(name)
        info = self.info.setdefault(name, {})
        info["discovery_runs"] = info.get("discovery_runs", 0) + self.forward_runs - start
        self._structures[name] = structure
        return structure

    def _probe_bit(self, name, probe, coord, b, owner, seen_all):
        """Perturb the elements whose index has bit b set, then those with it clear: None
        when some output moves both times (the axis is not separating). `probe`: (base
        outputs, x0 + bump, x0 + 0.0, whether the base outputs hold a NaN)."""
        f0, bumped, same, nan0 = probe
        mask = (coord & (1 << b)) != 0            # over one axis, broadcast over the others
        changed = self._changed if nan0 else _differs
        c1 = changed(f0, self.outputs(name, np.where(mask, bumped, same)))
        c0 = changed(f0, self.outputs(name, np.where(mask, same, bumped)))
        both = np.logical_and(c1, c0)
        if both.any():
            return None
        # in place (the state arrays belong to this axis): owner |= c1 << b, seen &= c1 | c0
        np.bitwise_or(owner, np.int64(1) << b, out=owner, where=c1)
        np.logical_or(c1, c0, out=c1)
        np.logical_and(seen_all, c1, out=seen_all)
        return owner, seen_all

    @staticmethod
    def _changed(f0, f):
        return ~((f == f0) | (np.isnan(f) & np.isnan(f0)))

    def exact(self, name: str, dense: bool = False) -> np.ndarray:
        """The numeric gradient dL/d(name), float64, by colouring (or densely); its error
        estimate goes to `errors[name]`."""
        x0 = self.base[name]
        info = self.info.setdefault(name, {})
        start = self.forward_runs
        res = None
        if x0.size and not dense:
            structure = self.discover(name)
            start = self.forward_runs
            res = self._coloured(name, structure, 1.0)
            info["structure"] = structure
            if res is not None and not self._spot_check(name, res[0]):
                res = None
            info["method"] = "coloured" if res is not None else "dense (colouring inconsistent)"
        if res is None:
            res = self._dense(name, 1.0)
            info.setdefault("method", "dense")
        info["forward_runs"] = self.forward_runs - start + info.get("discovery_runs", 0)
        self._exact[name] = res
        self.errors[name] = res[1]
        return res[0]

    def refined(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(numeric gradient, error estimate) with every step CONFIRM_FACTOR as large: the
        second step that confirms a mismatch (same method as `exact`; cached)."""
        if name not in self._refined:
            s = self.info.get(name, {}).get("structure")
            start = self.forward_runs
            res = None
            if s is not None and str(self.info[name].get("method")) == "coloured":
                res = self._coloured(name, s, CONFIRM_FACTOR)
            if res is None:
                res = self._dense(name, CONFIRM_FACTOR)
            self.info.setdefault(name, {})["confirm_runs"] = self.forward_runs - start
            self._refined[name] = res
        return self._refined[name]

    def _combine(self, name, d1, d2, rnd):
        if not self._richardson(name):
            return d1, rnd
        return (4 * d2 - d1) / 3, np.abs(d2 - d1) / 3 + 3 * rnd

    def _coloured(self, name: str, s: Structure, factor: float):
        x0 = self.base[name]
        h = self.steps(name, factor)
        d1, d2, rnd = np.zeros(x0.size), np.zeros(x0.size), np.zeros(x0.size)
        valid = np.ones(self.cot.shape, bool)
        for a in s.separating:
            valid &= (s.owners[a] >= 0) & (s.owners[a] < x0.shape[a])
        all_valid = bool(valid.all())
        free_shape = tuple(x0.shape[a] for a in s.free_axes)
        eps = self._eps(name)
        passes = (1.0, 0.5) if self._richardson(name) else (1.0,)
        acot = np.abs(self.cot) if all_valid else np.abs(self.cot[valid])
        cot = self.cot if all_valid else self.cot[valid]
        h_flat = h.reshape(-1)
        if x0.ndim:
            # every output's owner element with the free axes at 0; a colour adds its offset
            strides = np.cumprod((x0.shape[1:] + (1,))[::-1])[::-1]
            base_flat = np.zeros(int(valid.sum()), np.int64)
            for a in s.owners:
                base_flat += (s.owners[a] if all_valid else s.owners[a][valid]) * strides[a]
            hw_base = h_flat[base_flat] if not s.free_axes else None
        try:
            for c in range(s.colours):
                cidx = np.unravel_index(c, free_shape) if free_shape else ()
                if x0.ndim:
                    mask = None                    # all elements (no free axis)
                    for a, v in zip(s.free_axes, cidx):
                        m = _axis_index(x0.shape, a) == v
                        mask = m if mask is None else mask & m
                    offset = sum(int(v) * int(strides[a]) for a, v in zip(s.free_axes, cidx))
                    flat = base_flat + offset if offset else base_flat
                else:
                    mask = None
                    flat = None
                for k, f in enumerate(passes):
                    # f * h * mask: a True mask multiplies by 1.0, bit for bit
                    step = f * h if mask is None else f * h * mask
                    fp, fm = self._pair(name, step)
                    diff = fp - fm
                    if not all_valid and (diff != 0)[~valid].any():
                        return None           # an output no element owns changed: not separable
                    target = d1 if k == 0 else d2
                    if flat is None:
                        w = self.cot * diff
                        target[0] = w.sum() / (2 * f * float(h))
                        if k == 0:
                            rnd[0] = eps * float(np.dot(np.abs(self.cot), np.abs(fp) + np.abs(fm))
                                                 ) / (2 * float(h))
                        continue
                    if not all_valid:
                        diff, fp, fm = diff[valid], fp[valid], fm[valid]
                    w = cot * diff
                    hw = 2 * f * (hw_base if hw_base is not None else h_flat[flat])
                    target += np.bincount(flat, weights=w / hw, minlength=x0.size)
                    if k == 0:
                        a_ = acot * (np.abs(fp) + np.abs(fm))
                        rnd += eps * np.bincount(flat, weights=a_ / hw, minlength=x0.size)
        finally:
            self.restore(name)
        g, e = self._combine(name, d1, d2, rnd)
        return g.reshape(x0.shape), e.reshape(x0.shape)

    def _spot_check(self, name: str, grad: np.ndarray) -> bool:
        rng = np.random.default_rng(self.seed + 1)
        u = _signs(rng, grad.shape)   # random signs: exact for separable ops
        d = self.directional(name, u)
        terms = grad * u
        return abs(float(terms.sum()) - d) <= 1e-3 * float(np.abs(terms).sum()) + 1e-9

    def _dense(self, name: str, factor: float = 1.0):
        """Paddle's loop: one central difference per element (2N forward runs; 4N with
        Richardson). Returns (gradient, error estimate)."""
        x0 = self.base[name]
        h = self.steps(name, factor).reshape(-1)
        eps = self._eps(name)
        d1, d2, rnd = np.zeros(x0.size), np.zeros(x0.size), np.zeros(x0.size)
        x = x0.copy()
        flat = x.reshape(-1)
        passes = (1.0, 0.5) if self._richardson(name) else (1.0,)
        acot = np.abs(self.cot)
        try:
            for i in range(x0.size):
                orig = flat[i]
                for k, f in enumerate(passes):
                    flat[i] = orig + f * h[i]
                    fp = self.outputs(name, x)
                    flat[i] = orig - f * h[i]
                    fm = self.outputs(name, x)
                    flat[i] = orig
                    val = float(np.dot(self.cot, fp - fm)) / (2 * f * h[i])
                    if k == 0:
                        d1[i] = val
                        rnd[i] = eps * float(np.dot(acot, np.abs(fp) + np.abs(fm))) / (2 * h[i])
                    else:
                        d2[i] = val
        finally:
            self.restore(name)
        g, e = self._combine(name, d1, d2, rnd)
        return g.reshape(x0.shape), e.reshape(x0.shape)

    def element_estimate(self, name: str, flat_index: int, factor: float = 1.0):
        """(numeric derivative of L along one element, error estimate)."""
        u = np.zeros(self.base[name].shape)
        u.reshape(-1)[flat_index] = 1.0
        return self.directional_estimate(name, u, factor)

    def element(self, name: str, flat_index: int) -> float:
        """The numeric derivative of L along one element."""
        return self.element_estimate(name, flat_index)[0]

    # -- fast mode --------------------------------------------------------------------------
    def directions(self, name: str, n_dirs: int = FAST_DIRECTIONS, n_blocks: int = FAST_BLOCKS):
        """[(u, numeric directional derivative)] for random directions split into blocks;
        their error estimates go to `info[name]["direction_errors"]`."""
        x0 = self.base[name]
        rng = np.random.default_rng(self.seed + 2)
        out, errs = [], []
        start = self.forward_runs
        for _ in range(n_dirs):
            u = _signs(rng, x0.shape)
            blocks = min(n_blocks, x0.size)
            label = rng.permutation(x0.size) % blocks
            for b in range(blocks):
                ub = np.where(label.reshape(x0.shape) == b, u, 0.0)
                d, e = self.directional_estimate(name, ub)
                out.append((ub, d))
                errs.append(e)
        info = self.info.setdefault(name, {})
        info["method"] = "fast"
        info["direction_errors"] = errs
        info["forward_runs"] = self.forward_runs - start + info.get("discovery_runs", 0)
        return out

    @staticmethod
    def direction_error(u, analytic, numeric_d) -> float:
        terms = np.asarray(analytic, np.float64) * u
        denom = max(abs(numeric_d), float(np.sqrt((terms ** 2).sum())), GRAD_ABS_FLOOR)
        return abs(float(terms.sum()) - numeric_d) / denom

    @staticmethod
    def direction_denominator(u, analytic, numeric_d) -> float:
        terms = np.asarray(analytic, np.float64) * u
        return max(abs(numeric_d), float(np.sqrt((terms ** 2).sum())), GRAD_ABS_FLOOR)

    def localize(self, name: str, analytic: np.ndarray, u: np.ndarray, tol,
                 limit: int = MAX_REPORTED) -> list[Finding]:
        """Bisect the support of a direction that disagreed, down to the wrong elements.
        `tol`: a number, or None for the float64 bound from each estimate's error."""
        analytic = np.asarray(analytic, np.float64)
        found: list[Finding] = []
        stack = [np.flatnonzero(u.reshape(-1))]

        def allowed(err_est, denom):
            if tol is not None:
                return tol
            return F64_RTOL + ERROR_FACTOR * err_est / denom

        while stack and len(found) < limit:
            support = stack.pop()
            if support.size == 1:
                i = int(support[0])
                num, e = self.element_estimate(name, i)
                ana = float(analytic.reshape(-1)[i])
                err = float(relative_error(ana, num))
                if err > allowed(e, max(abs(num), GRAD_ABS_FLOOR)):
                    num2, e2 = self.element_estimate(name, i, CONFIRM_FACTOR)   # confirm
                    err2 = float(relative_error(ana, num2))
                    if err2 > allowed(e2, max(abs(num2), GRAD_ABS_FLOOR)):
                        found.append(Finding(np.unravel_index(i, analytic.shape), ana, num2,
                                             err2))
                continue
            scored = []
            for half in (support[: support.size // 2], support[support.size // 2:]):
                uh = np.zeros(u.size)
                uh[half] = u.reshape(-1)[half]
                uh = uh.reshape(u.shape)
                d, e = self.directional_estimate(name, uh)
                err = self.direction_error(uh, analytic, d)
                if err > allowed(e, self.direction_denominator(uh, analytic, d)):
                    scored.append((err, half))
            scored.sort(key=lambda t: t[0])
            stack.extend(h for _, h in scored)   # the worst half is popped first
        return found


def float64_bound(numeric, error, rtol: float = F64_RTOL, factor: float = ERROR_FACTOR,
                  floor: float = GRAD_ABS_FLOOR):
    """Per-element max relative error for a float64 analytic gradient: `rtol` plus `factor`
    times the engine's error estimate, relative to max(|numeric|, floor)."""
    numeric = np.asarray(numeric, np.float64)
    return rtol + factor * np.asarray(error, np.float64) / np.maximum(np.abs(numeric), floor)


class Comparison:
    """The verdict of `compare`: ok, worst error, how many elements are wrong (confirmed),
    the worst one (index, analytic, numeric at both steps, allowed error) and notes."""

    def __init__(self, ok, worst, bad=0, size=0, index=None, analytic=None, numeric=None,
                 numeric_confirm=None, allowed=None, error=None, unconfirmed=0, vacuous=False):
        self.ok, self.worst, self.bad, self.size = ok, worst, bad, size
        self.index, self.analytic, self.numeric = index, analytic, numeric
        self.numeric_confirm, self.allowed, self.error = numeric_confirm, allowed, error
        self.unconfirmed, self.vacuous = unconfirmed, vacuous
        self.mask = None            # the confirmed wrong elements (bool array), on failure
        self._arrays = None         # (analytic, numeric, numeric at the confirming step,
        #                              error, allowed) for restrict()

    def restrict(self, flat_indices) -> "Comparison":
        """The same verdict over only these wrong elements (e.g. after excluding kinks)."""
        ana, num, num2, err, allowed = self._arrays
        keep = np.zeros(ana.size, bool)
        keep[list(flat_indices)] = True
        return _verdict(ana, num, num2, err, allowed, keep.reshape(ana.shape),
                        self.unconfirmed, self.vacuous)


def compare(engine: NumericEngine, name: str, analytic, tol: float | None = None,
            numeric=None) -> Comparison:
    """Analytic gradient of input `name` against the engine's exact numeric one.

    tol None: the float64 bound (`float64_bound` of the engine's error estimate); a number:
    that max relative error (float32 analytic gradients, user-given numeric gradients).
    `numeric`: a gradient to use instead of the engine's (e.g. user_defined_grads): no
    estimate, no confirmation. An element is reported only when it is also wrong with steps
    CONFIRM_FACTOR as large (`engine.refined`)."""
    from harness.tolerances import VACUOUS_ABS

    ana = np.asarray(analytic, np.float64)
    given = numeric is not None
    if given:
        num, est = np.asarray(numeric, np.float64), np.zeros(ana.shape)
    else:
        num, est = engine._exact[name] if name in engine._exact else \
            (engine.exact(name), engine.errors[name])
    if ana.size == 0:
        return Comparison(True, 0.0, size=0)
    vacuous = float(np.abs(num).max()) <= VACUOUS_ABS

    def bound(n, e):
        if tol is not None:
            return np.full(n.shape, float(tol))
        return float64_bound(n, e)

    err = relative_error(ana, num)
    err = np.where(np.isnan(err), np.inf, err)
    allowed = bound(num, est)
    bad = err > allowed
    if not bad.any():
        return Comparison(True, float(err.max()), size=ana.size, vacuous=vacuous)
    num2 = None
    confirmed = bad.copy()
    if not given:
        # confirm the worst wrong elements one by one with a 10x smaller step (4 runs each);
        # only when none of the first CONFIRM_MAX is confirmed and more remain, recompute all
        flat_bad = np.flatnonzero(bad.reshape(-1))
        order = flat_bad[np.argsort(-(err / allowed).reshape(-1)[flat_bad], kind="stable")]
        num2 = num.reshape(-1).copy()
        confirmed = np.zeros(ana.size, bool)
        checked = order[:CONFIRM_MAX]
        for i in checked:
            n2, e2 = engine.element_estimate(name, int(i), CONFIRM_FACTOR)
            num2[i] = n2
            a2 = float(ana.reshape(-1)[i])
            lim = float(tol) if tol is not None else float(float64_bound(n2, e2))
            e_ = float(relative_error(a2, n2))
            confirmed[i] = not (e_ <= lim)
        if confirmed.any():
            confirmed[order[CONFIRM_MAX:]] = True   # not re-checked: reported as found
        elif order.size > CONFIRM_MAX:
            full, est2 = engine.refined(name)
            err2 = relative_error(ana, full)
            err2 = np.where(np.isnan(err2), np.inf, err2)
            confirmed = (bad & (err2 > bound(full, est2))).reshape(-1)
            num2 = full.reshape(-1)
        confirmed = confirmed.reshape(ana.shape)
        num2 = num2.reshape(ana.shape)
    unconfirmed = int(bad.sum() - confirmed.sum())
    if not confirmed.any():
        return Comparison(True, float(err.max()), size=ana.size, unconfirmed=unconfirmed,
                          vacuous=vacuous)
    return _verdict(ana, num, num2, err, allowed, confirmed, unconfirmed, vacuous)


def _verdict(ana, num, num2, err, allowed, confirmed, unconfirmed, vacuous) -> Comparison:
    if not confirmed.any():
        return Comparison(True, float(err.max()), size=ana.size, unconfirmed=unconfirmed,
                          vacuous=vacuous)
    score = np.where(confirmed, err / allowed, -1.0)
    k = int(np.argmax(score))
    idx = np.unravel_index(k, ana.shape)
    c = Comparison(False, float(err[confirmed].max()), bad=int(confirmed.sum()), size=ana.size,
                   index=idx, analytic=float(ana.reshape(-1)[k]),
                   numeric=float(num.reshape(-1)[k]),
                   numeric_confirm=None if num2 is None else float(num2.reshape(-1)[k]),
                   allowed=float(allowed.reshape(-1)[k]), error=float(err.reshape(-1)[k]),
                   unconfirmed=unconfirmed, vacuous=vacuous)
    c.mask = confirmed
    c._arrays = (ana, num, num2, err, allowed)
    return c
