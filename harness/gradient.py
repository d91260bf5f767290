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
"""
from __future__ import annotations

import math

import numpy as np

from harness.tolerances import GRAD_ABS_FLOOR

__all__ = ["NumericEngine", "Structure", "Finding", "AUTO_EXACT_MAX_ELEMENTS",
           "AUTO_MAX_COLOURS", "FAST_DIRECTIONS", "FAST_BLOCKS", "relative_error"]

AUTO_EXACT_MAX_ELEMENTS = 4096   # auto: exact up to this many elements per input ...
AUTO_MAX_COLOURS = 64            # ... and beyond it when the colouring needs <= this many colours
FAST_DIRECTIONS = 1              # fast mode: random directions ...
FAST_BLOCKS = 16                 # ... each split into this many random blocks
MAX_REPORTED = 5                 # fast mode: elements localized per failing check


def relative_error(analytic, numeric, floor: float = GRAD_ABS_FLOOR):
    """Paddle's `_assert_is_close` metric: |a - n| / max(|n|, floor)."""
    analytic = np.asarray(analytic, dtype=np.float64)
    numeric = np.asarray(numeric, dtype=np.float64)
    return np.abs(analytic - numeric) / np.maximum(np.abs(numeric), floor)


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
    """Numeric derivatives of L(x) = sum(cot * out) for one float64 PreparedOp."""

    def __init__(self, prepared, cotangents: dict, delta: float = 0.005, seed: int = 2024):
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
        self._f0 = None
        self._structures: dict[str, Structure | None] = {}

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

    def directional(self, name: str, u: np.ndarray) -> float:
        """(L(x + d u) - L(x - d u)) / 2d: the numeric derivative of L along u."""
        x0, d = self.base[name], self.delta
        try:
            return (self.loss(name, x0 + d * u) - self.loss(name, x0 - d * u)) / (2 * d)
        finally:
            self.restore(name)

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
            coords = np.indices(x0.shape) if x0.ndim else np.zeros((0,), int)
            state = {}
            for a, size in enumerate(x0.shape):     # phase 1: bit 0 of every axis
                if size > 1:
                    state[a] = self._probe_bit(name, f0, x0, bump, coords[a], 0,
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
                        st = self._probe_bit(name, f0, x0, bump, coords[a], b, *st)
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

    def _probe_bit(self, name, f0, x0, bump, coord, b, owner, seen_all):
        """Perturb the elements whose index has bit b set, then those with it clear: None
        when some output moves both times (the axis is not separating)."""
        mask = ((coord >> b) & 1).astype(bool)
        c1 = self._changed(f0, self.outputs(name, x0 + bump * mask))
        c0 = self._changed(f0, self.outputs(name, x0 + bump * ~mask))
        if (c1 & c0).any():
            return None
        return owner | (c1.astype(np.int64) << b), seen_all & (c1 | c0)

    @staticmethod
    def _changed(f0, f):
        return ~((f == f0) | (np.isnan(f) & np.isnan(f0)))

    def exact(self, name: str, dense: bool = False) -> np.ndarray:
        """The numeric gradient dL/d(name), float64, by colouring (or densely)."""
        x0 = self.base[name]
        info = self.info.setdefault(name, {})
        start = self.forward_runs
        grad = None
        if x0.size and not dense:
            structure = self.discover(name)
            start = self.forward_runs
            grad = self._coloured(name, structure)
            info["structure"] = structure
            if grad is not None and not self._spot_check(name, grad):
                grad = None
            info["method"] = "coloured" if grad is not None else "dense (colouring inconsistent)"
        if grad is None:
            grad = self._dense(name)
            info.setdefault("method", "dense")
        info["forward_runs"] = self.forward_runs - start + info.get("discovery_runs", 0)
        return grad

    def _coloured(self, name: str, s: Structure):
        x0, d = self.base[name], self.delta
        grad = np.zeros(x0.size)
        sep = list(s.separating)
        valid = np.ones(self.cot.shape, bool)
        for a in sep:
            valid &= (s.owners[a] >= 0) & (s.owners[a] < x0.shape[a])
        free_shape = tuple(x0.shape[a] for a in s.free_axes)
        coords = np.indices(x0.shape) if x0.ndim else None
        try:
            for c in range(s.colours):
                cidx = np.unravel_index(c, free_shape) if free_shape else ()
                if x0.ndim:
                    mask = np.ones(x0.shape, bool)
                    for a, v in zip(s.free_axes, cidx):
                        mask &= coords[a] == v
                else:
                    mask = np.ones((), bool)
                diff = (self.outputs(name, x0 + d * mask) - self.outputs(name, x0 - d * mask)) \
                    / (2 * d)
                w = self.cot * diff
                moved = diff != 0
                if (moved & ~valid).any():
                    return None               # an output no element owns changed: not separable
                if not x0.ndim:
                    grad[0] = w.sum()
                    continue
                full = []
                free = dict(zip(s.free_axes, cidx))
                for a in range(x0.ndim):
                    full.append(s.owners[a][valid] if a in s.owners else
                                np.full(int(valid.sum()), free[a], np.int64))
                flat = np.ravel_multi_index(tuple(full), x0.shape)
                grad += np.bincount(flat, weights=w[valid], minlength=x0.size)
        finally:
            self.restore(name)
        return grad.reshape(x0.shape)

    def _spot_check(self, name: str, grad: np.ndarray) -> bool:
        rng = np.random.default_rng(self.seed + 1)
        u = rng.choice([-1.0, 1.0], grad.shape)   # random signs: exact for separable ops
        d = self.directional(name, u)
        terms = grad * u
        return abs(float(terms.sum()) - d) <= 1e-3 * float(np.abs(terms).sum()) + 1e-9

    def _dense(self, name: str) -> np.ndarray:
        """Paddle's loop: one central difference per element (2N forward runs)."""
        x0, d = self.base[name], self.delta
        grad = np.zeros(x0.size)
        x = x0.copy()
        flat = x.reshape(-1)
        try:
            for i in range(x0.size):
                orig = flat[i]
                flat[i] = orig + d
                lp = self.loss(name, x)
                flat[i] = orig - d
                lm = self.loss(name, x)
                flat[i] = orig
                grad[i] = (lp - lm) / (2 * d)
        finally:
            self.restore(name)
        return grad.reshape(x0.shape)

    def element(self, name: str, flat_index: int) -> float:
        """The numeric derivative of L along one element."""
        u = np.zeros(self.base[name].shape)
        u.reshape(-1)[flat_index] = 1.0
        return self.directional(name, u)

    # -- fast mode --------------------------------------------------------------------------
    def directions(self, name: str, n_dirs: int = FAST_DIRECTIONS, n_blocks: int = FAST_BLOCKS):
        """[(u, numeric directional derivative)] for random directions split into blocks."""
        x0 = self.base[name]
        rng = np.random.default_rng(self.seed + 2)
        out = []
        start = self.forward_runs
        for _ in range(n_dirs):
            u = rng.choice([-1.0, 1.0], x0.shape)
            blocks = min(n_blocks, x0.size)
            label = rng.permutation(x0.size) % blocks
            for b in range(blocks):
                ub = np.where(label.reshape(x0.shape) == b, u, 0.0)
                out.append((ub, self.directional(name, ub)))
        info = self.info.setdefault(name, {})
        info["method"] = "fast"
        info["forward_runs"] = self.forward_runs - start + info.get("discovery_runs", 0)
        return out

    @staticmethod
    def direction_error(u, analytic, numeric_d) -> float:
        terms = np.asarray(analytic, np.float64) * u
        denom = max(abs(numeric_d), float(np.sqrt((terms ** 2).sum())), GRAD_ABS_FLOOR)
        return abs(float(terms.sum()) - numeric_d) / denom

    def localize(self, name: str, analytic: np.ndarray, u: np.ndarray, tol: float,
                 limit: int = MAX_REPORTED) -> list[Finding]:
        """Bisect the support of a direction that disagreed, down to the wrong elements."""
        analytic = np.asarray(analytic, np.float64)
        found: list[Finding] = []
        stack = [np.flatnonzero(u.reshape(-1))]
        while stack and len(found) < limit:
            support = stack.pop()
            if support.size == 1:
                i = int(support[0])
                num = self.element(name, i)
                ana = float(analytic.reshape(-1)[i])
                err = float(relative_error(ana, num))
                if err > tol:
                    found.append(Finding(np.unravel_index(i, analytic.shape), ana, num, err))
                continue
            scored = []
            for half in (support[: support.size // 2], support[support.size // 2:]):
                uh = np.zeros(u.size)
                uh[half] = u.reshape(-1)[half]
                uh = uh.reshape(u.shape)
                err = self.direction_error(uh, analytic, self.directional(name, uh))
                if err > tol:
                    scored.append((err, half))
            scored.sort(key=lambda t: t[0])
            stack.extend(h for _, h in scored)   # the worst half is popped first
        return found
