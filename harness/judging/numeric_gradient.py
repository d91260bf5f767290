"""The numeric gradient engine: Jacobian colouring (exact mode, lazy levels) and randomized
directional checks with bisection (fast mode), per-element steps, Richardson extrapolation,
the float64 bound and the confirmation at a smaller step. See docs/gradients.md ("The
numeric engine", "A sound numeric gradient")."""
from __future__ import annotations

import functools
import math
import weakref

import numpy as np

from harness.processes.heap import keep_freed_heap
from harness.options import DEFAULT_SEED  # noqa: I001
from harness.judging.tolerances import GRAD_ABS_FLOOR, VACUOUS_ABS

__all__ = ["NumericEngine", "Structure", "Finding", "Comparison", "AUTO_EXACT_MAX_ELEMENTS",
           "AUTO_MAX_COLOURS", "FAST_BLOCKS", "F64_RTOL", "ERROR_FACTOR", "CONFIRM_FACTOR",
           "STEP_SCALE_MIN", "relative_error", "allowed_error", "float64_bound", "compare"]

AUTO_EXACT_MAX_ELEMENTS = 4096   # auto: exact up to this many elements per input ...
AUTO_MAX_COLOURS = 64            # ... and beyond it when the colouring needs <= this many colours
FAST_BLOCKS = 16                 # fast mode: one random direction split into this many blocks
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
    return np.arange(shape[axis]).reshape([n if a == axis else 1 for a, n in enumerate(shape)])


def _signs(rng, shape):
    """= rng.choice([-1.0, 1.0], shape), the same draws bit for bit (choice draws
    integers(0, 2)), without choice's own overhead."""
    return _SIGNS[rng.integers(0, 2, shape)]


_SIGNS = np.array([-1.0, 1.0])


class Structure:
    """What discovery found for one input: separating axes and each output's owner."""

    def __init__(self, shape, separating, owners, complete=True):
        self.shape = tuple(shape)
        self.separating = tuple(separating)       # axes
        self.owners = owners                      # axis -> int array over outputs (-1: none)
        self.free_axes = tuple(a for a in range(len(shape)) if a not in separating)
        self.colours = math.prod([shape[a] for a in self.free_axes]) if self.free_axes else 1
        self.complete = complete

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

    `exact(name)` / `directions(name)` / `element_estimate(name, i)` give the numeric values
    (Richardson extrapolated over steps h and h/2 in float64); `errors[name]` holds the
    per-element error estimate of the last `exact`; `refined(name)` recomputes with steps
    CONFIRM_FACTOR as large; `compare(...)` (module function) turns them into a verdict."""

    def __init__(self, prepared, cotangents: dict, delta: float = 0.005, seed: int = DEFAULT_SEED,
                 base_outputs: dict | None = None):
        keep_freed_heap()          # forward runs allocate and free arrays: no page faults
        self.prepared = prepared
        self.order = [n for n in prepared.output_names() if n in cotangents]
        self.cot = np.concatenate([np.asarray(cotangents[n], np.float64).reshape(-1)
                                   for n in self.order]) if self.order else np.zeros(0)
        self._acot = np.abs(self.cot)
        self.delta = float(delta)
        self.seed = seed
        self.forward_runs = 0
        self.specs = {s.name: s for specs in prepared.inputs.values() for s in specs}
        self.base = {n: np.array(s.data, dtype=np.float64) for n, s in self.specs.items()
                     if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f"}
        self.info: dict[str, dict] = {}
        self.errors: dict[str, np.ndarray] = {}      # name -> error estimate of exact()
        self._f0 = None
        self._loss_magnitude = None
        if base_outputs is not None and all(base_outputs.get(n) is not None
                                            for n in self.order):
            # the outputs the caller's forward run gave at the base point: one run less
            self._f0 = self._flat_outputs(base_outputs)
        self._structures: dict[str, Structure | None] = {}
        self._refined: dict[str, tuple] = {}
        self._exact: dict[str, tuple] = {}
        self._passes: dict[str, _Passes] = {}         # exact(lazy=True) awaiting settle
        self._plans: dict[str, _ColourPlan] = {}
        self._directions: dict[str, list[_Direction]] = {}   # directions(lazy=True)
        self._abs_base: dict[str, np.ndarray] = {}

    # -- steps ------------------------------------------------------------------------------
    def is_float64(self, name: str) -> bool:
        return np.dtype(self.specs[name].data.dtype) == np.float64

    def steps(self, name: str, factor: float = 1.0) -> np.ndarray:
        """The per-element step of input `name` (float64: scaled by |x|; float32: delta)."""
        x0 = self.base[name]
        if not self.is_float64(name):
            return np.full(x0.shape, self.delta * factor)
        return self.delta * factor * np.clip(np.abs(x0), STEP_SCALE_MIN, 1.0)

    def _eps(self, name: str) -> float:
        return _EPS["float64"] if self.is_float64(name) else _EPS["float32"]

    # -- running ----------------------------------------------------------------------------
    def outputs(self, name: str, x: np.ndarray, keep: bool = True) -> np.ndarray:
        """The checked outputs (flattened, concatenated, float64) with input `name` = x.
        `keep=False`: the caller uses them before the next run, so an op's own output
        array may be returned as it is (no copy); never write into it."""
        spec = self.specs[name]
        self.prepared.set_input(name, np.asarray(x).astype(spec.data.dtype, copy=False),
                                spec.lod)
        outs = self.prepared.forward()
        self.forward_runs += 1
        return self._flat_outputs(outs, keep)

    def _flat_outputs(self, outs: dict, keep: bool = True) -> np.ndarray:
        parts = []
        for n in self.order:
            v = outs.get(n)
            if v is None:
                raise RuntimeError(f"output '{n}' was not produced")
            parts.append(np.asarray(v, dtype=np.float64).reshape(-1))
        if len(parts) == 1:  # a copy, as np.concatenate makes (the op may reuse its buffer)
            return np.array(parts[0]) if keep else parts[0]
        return np.concatenate(parts) if parts else np.zeros(0)

    def restore(self, name: str) -> None:
        spec = self.specs[name]
        self.prepared.set_input(name, self.base[name].astype(spec.data.dtype), spec.lod)

    def base_outputs(self, name: str) -> np.ndarray:
        """The checked outputs at the base point (run once per engine: every input is
        restored to its base value after each perturbation)."""
        if self._f0 is None:
            self._f0 = self.outputs(name, self.base[name])
        return self._f0

    def loss(self, name: str, x: np.ndarray) -> float:
        return float(np.dot(self.cot, self.outputs(name, x)))

    def _pair(self, name, step):
        """(outputs at x0 + step, outputs at x0 - step)."""
        x0 = self.base[name]
        return self.outputs(name, x0 + step), self.outputs(name, x0 - step)

    def directional_estimate(self, name: str, u: np.ndarray, scale: float = 1.0,
                             richardson: bool = True):
        """(numeric derivative of L along u, error estimate). Float64: Richardson over the
        steps t and t/2 with t = delta * scale * clip(min |x| on u's support, ...);
        `richardson=False`: the central difference at t alone."""
        u = np.asarray(u, np.float64)
        t = self.direction_step(name, u, scale)
        try:
            fp, fm = self._pair(name, t * u)
            d1 = float(np.dot(self.cot, fp - fm)) / (2 * t)
            rnd = self._eps(name) * float(np.dot(self._acot, np.abs(fp) + np.abs(fm))) / (2 * t)
            if not (richardson and self.is_float64(name)):
                return d1, rnd
            fp, fm = self._pair(name, 0.5 * t * u)
            d2 = float(np.dot(self.cot, fp - fm)) / t
        finally:
            self.restore(name)
        r = (4 * d2 - d1) / 3
        return r, abs(d2 - d1) / 3 + 3 * rnd

    def loss_magnitude(self, name: str) -> float:
        """sum |cot * out| at the base point (a difference's roundoff is eps times this)."""
        if self._loss_magnitude is None:
            self._loss_magnitude = float(np.dot(self._acot, np.abs(self.base_outputs(name))))
        return self._loss_magnitude

    def direction_step(self, name: str, u: np.ndarray, scale: float = 1.0) -> float:
        """The step along u: delta * scale, times clip(min |x| on u's support, 0.01, 1) in
        float64."""
        t = self.delta * scale
        if self.is_float64(name):
            a = self._abs_base.get(name)
            if a is None:
                a = self._abs_base[name] = np.abs(self.base[name])
            mag = float(a.min()) if u.all() else \
                float(a[u != 0].min()) if u.any() else 1.0
            t *= float(np.clip(mag, STEP_SCALE_MIN, 1.0))
        return t

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
            bump = (_bump if isinstance(self.seed, int) else _bump.__wrapped__)(
                self.seed, x0.shape, self.delta)
            # x0 + bump * mask, bit for bit, as a choice between two arrays made once
            # (x0 + 0.0: an unperturbed -0.0 becomes +0.0, as x0 + bump * False does)
            changed = self._changed if np.isnan(f0).any() else np.not_equal
            probe = (f0, x0 + bump, x0 + 0.0, changed)
            state = {}
            for a, size in enumerate(x0.shape):     # phase 1: bit 0 of every axis
                if size > 1:
                    state[a] = self._probe_bit(name, probe, _axis_index(x0.shape, a), 0,
                                               np.zeros(f0.shape, np.int64),
                                               np.ones(f0.shape, bool))
            free = [a for a, st in state.items() if st is None]
            colours = math.prod([x0.shape[a] for a in free]) if free else 1
            complete = max_colours is None or colours <= max_colours
            if complete:                            # phase 2: owners along the others
                coded = self._probe_codes(name, probe, state)
                if coded is not None:
                    state.update(coded)
                else:                               # bit by bit
                    for a, st in state.items():
                        for b in range(1, int(math.ceil(math.log2(x0.shape[a])))):
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
            structure = Structure(x0.shape, separating, owners, complete)
        finally:
            self.restore(name)
        info = self.info.setdefault(name, {})
        info["discovery_runs"] = info.get("discovery_runs", 0) + self.forward_runs - start
        self._structures[name] = structure
        return structure

    def _probe_bit(self, name, probe, coord, b, owner, seen_all):
        """Perturb the elements whose index has bit b set, then those with it clear: None
        when some output moves both times (the axis is not separating). `probe`: (base
        outputs, x0 + bump, x0 + 0.0, where outputs differ from the base ones)."""
        f0, bumped, same, changed = probe
        mask = (coord & (1 << b)) != 0            # over one axis, broadcast over the others
        c1 = changed(f0, self.outputs(name, np.where(mask, bumped, same), keep=False))
        c0 = changed(f0, self.outputs(name, np.where(mask, same, bumped), keep=False))
        if np.logical_and(c1, c0).any():
            return None
        # in place (the state arrays belong to this axis): owner |= c1 << b, seen &= c1 | c0
        np.bitwise_or(owner, c1 * np.int64(1 << b), out=owner)   # (where= is 4x slower)
        np.logical_or(c1, c0, out=c1)
        np.logical_and(seen_all, c1, out=seen_all)
        return owner, seen_all

    def _probe_codes(self, name, probe, state):
        """Phase 2 of discovery: the halved index (i // 2) of each output's owner along every
        axis still separating, at once, by a constant-weight code (docs/gradients.md,
        "exact mode"). {axis: (owner, seen)} as `_probe_bit` builds them, or None when the
        code is not the shorter or an output depends on two indices."""
        f0, bumped, same, changed = probe
        shape = bumped.shape
        axes = [a for a, st in state.items() if st is not None]
        halves = [(shape[a] + 1) // 2 for a in axes]
        bit_runs = sum(2 * (int(math.ceil(math.log2(shape[a]))) - 1) for a in axes
                       if shape[a] > 2)
        n = math.prod(halves) if halves else 0
        k = _code_length(n)
        if not axes or k is None or k >= bit_runs:
            return None
        planes = _code_planes(shape, tuple(axes), k)
        pattern = np.zeros(f0.shape, np.int32)
        for b in range(k):
            moved = changed(f0, self.outputs(name, np.where(planes[b], bumped, same),
                                             keep=False))
            np.add(pattern, moved * np.int32(1 << b), out=pattern)
        pos = _code_decoder(k)[pattern]           # -1: moved in fewer runs than K/2
        if pos.size and pos.min() < -1:
            return None                           # an output depends on two indices
        owned = (pos >= 0) & (pos < n)
        pos = np.where(owned, pos, 0).astype(np.int64)
        out = {}
        for a, half_size in reversed(list(zip(axes, halves))):
            owner0, seen0 = state[a]              # phase 1: bit 0 of the owner
            pos, index = np.divmod(pos, half_size)
            index = 2 * index + (owner0 & 1)
            out[a] = (index, owned & seen0 & (index < shape[a]))
        return out

    @staticmethod
    def _changed(f0, f):
        return ~((f == f0) | (np.isnan(f) & np.isnan(f0)))

    def exact(self, name: str, dense: bool = False, lazy: bool = False) -> np.ndarray:
        """The numeric gradient dL/d(name), float64, by colouring (or densely); its error
        estimate goes to `errors[name]`. Eager (the default): every colour at Richardson's
        level and the colouring spot-checked at once; `lazy`: the forward difference per
        colour, taken further by `settle` (docs/gradients.md, "Lazy levels")."""
        x0 = self.base[name]
        info = self.info.setdefault(name, {})
        start = self.forward_runs
        self._passes.pop(name, None)
        passes = None
        if x0.size and not dense:
            structure = self.discover(name)
            start = self.forward_runs
            info["structure"] = structure
            passes = self._coloured(name, structure, 1.0, lazy=lazy)
            if passes is not None and not lazy and not self._verify(name, passes):
                passes = None
            info["method"] = "coloured" if passes is not None else \
                "dense (colouring inconsistent)"
        if passes is None:
            passes = self._dense(name, 1.0, lazy=lazy)
            info.setdefault("method", "dense")
        else:
            passes.verified = not lazy
        info["forward_runs"] = self.forward_runs - start + info.get("discovery_runs", 0)
        if passes.pending():
            self._passes[name] = passes
        self._store(name, passes)
        return self._exact[name][0]

    def _shaped(self, name: str, passes: "_Passes") -> tuple[np.ndarray, np.ndarray]:
        """(numeric gradient, error estimate) of `passes`, in the input's shape."""
        return tuple(a.reshape(self.base[name].shape) for a in passes.result())

    def _store(self, name: str, passes: "_Passes") -> None:
        self._exact[name] = self._shaped(name, passes)
        self.errors[name] = self._exact[name][1]

    def pending(self, name: str) -> bool:
        """Whether `exact(name, lazy=True)` left work for `settle`."""
        return name in self._passes

    def settle(self, name: str, elements):
        """Take the colours of `elements` (a bool mask over the input) one level further
        (forward difference -> central -> Richardson); when they are all at the top, check
        the colouring (a failed check recomputes densely). The updated (numeric gradient,
        error estimate), or None when nothing is left to do."""
        passes = self._passes.get(name)
        if passes is None:
            return None
        info = self.info.setdefault(name, {})
        start = self.forward_runs
        try:
            progressed = passes.advance(np.asarray(elements, bool).reshape(-1))
            if passes.inconsistent or (not progressed and not passes.verified):
                passes.verified = True
                if passes.inconsistent or not self._verify(name, passes):
                    info["method"] = "dense (colouring inconsistent)"
                    passes = self._dense(name, 1.0, lazy=True)
                progressed = True
        finally:
            self.restore(name)
        info["forward_runs"] = info.get("forward_runs", 0) + self.forward_runs - start
        if passes.pending():
            self._passes[name] = passes
        else:
            self._passes.pop(name, None)
        if not progressed:
            return None
        self._store(name, passes)
        return self._exact[name]

    def refined(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(numeric gradient, error estimate) with every step CONFIRM_FACTOR as large: the
        second step that confirms a mismatch (same method as `exact`; cached)."""
        if name not in self._refined:
            info = self.info.get(name, {})
            passes = None
            if info.get("method") == "coloured":
                passes = self._coloured(name, info["structure"], CONFIRM_FACTOR)
            if passes is None:
                passes = self._dense(name, CONFIRM_FACTOR)
            self._refined[name] = self._shaped(name, passes)
        return self._refined[name]

    def _coloured(self, name: str, s: Structure, factor: float, lazy: bool = False):
        """Differences per colour (a `_Passes`), or None when an output no element owns
        changed (the colouring does not hold). The plan is kept for the next call."""
        plan = self._plans.get(name)
        if plan is None or plan.structure is not s:
            plan = self._plans[name] = _ColourPlan(s, self.cot)
        return self._differences(name, plan, factor, lazy)

    def _dense(self, name: str, factor: float = 1.0, lazy: bool = False) -> "_Passes":
        """Paddle's loop: one difference per element (2N forward runs for central
        differences, 4N with Richardson; N when lazy and the forward ones agree)."""
        return self._differences(name, _ColourPlan.dense(self.base[name].size, self.cot),
                                 factor, lazy)

    def _differences(self, name: str, plan: "_ColourPlan", factor: float, lazy: bool):
        """Differences per colour of `plan` (a `_Passes`: lazy, the forward ones; else up to
        Richardson's), or None when an output no element owns changed."""
        x0f = self.base[name].reshape(-1)
        shape = self.base[name].shape
        f0 = self.base_outputs(name)
        h = self.steps(name, factor).reshape(-1)
        if not plan.all_valid:
            f0 = f0[plan.valid]
        # roundoff of a central difference: eps * sum |cot * out| over the outputs credited
        # to an element, / 2h, from the base outputs (|f(x+h)| + |f(x-h)| = 2|f(x)| + O(h))
        rnd = plan.spread(2 * self._eps(name) * plan.credit(plan.acot * np.abs(f0))) / (2 * h)
        pshape = plan.shape              # the plan's view of the flat input
        x0p, hp = x0f.reshape(pshape), h.reshape(pshape)
        engine = weakref.proxy(self)      # the engine keeps the passes: no reference cycle
        f0_all = self._f0

        def step(c, scale, sign):
            """sum(cot * (f(x + sign * scale * h on colour c) - f(x))) per element of c."""
            idx = plan.index(c)
            x = x0f.copy()                # a fresh array per run: an op may keep or write it
            x.reshape(pshape)[idx] = x0p[idx] + (sign * scale) * hp[idx]
            out = engine.outputs(name, x.reshape(shape), keep=False)
            if not plan.all_valid:
                moved = out[plan.invalid] != f0_all[plan.invalid]
                if moved.any():
                    return None           # an output no element owns changed: not separable
                out = out[plan.valid]
            return plan.credit(plan.cot * (out - f0))

        passes = _Passes(self.is_float64(name), h, rnd, plan, step)
        try:
            return passes if passes.run(lazy) else None
        finally:
            self.restore(name)

    def _verify(self, name: str, passes: "_Passes") -> bool:
        """The colouring checked with one random directional derivative (every colour at
        least at the central difference first: the check's tolerance is 1e-3)."""
        passes.raise_to(2)
        if passes.inconsistent:
            return False
        grad = passes.result()[0].reshape(self.base[name].shape)
        rng = np.random.default_rng(self.seed + 1)
        u = _signs(rng, grad.shape)   # random signs: exact for separable ops
        terms = grad * u
        total, limit = float(terms.sum()), 1e-3 * float(np.abs(terms).sum()) + 1e-9
        # one central difference (2 runs) first; Richardson's 2 more only when it disagrees
        if abs(total - self.directional_estimate(name, u, richardson=False)[0]) <= limit:
            return True
        return abs(total - self.directional_estimate(name, u)[0]) <= limit

    def element_estimate(self, name: str, flat_index: int, factor: float = 1.0):
        """(numeric derivative of L along one element, error estimate)."""
        u = np.zeros(self.base[name].shape)
        u.reshape(-1)[flat_index] = 1.0
        return self.directional_estimate(name, u, factor)

    # -- fast mode --------------------------------------------------------------------------
    def directions(self, name: str, n_blocks: int = FAST_BLOCKS, lazy: bool = False):
        """[(u, numeric directional derivative)] for one random direction split into blocks;
        their error estimates go to `info[name]["direction_errors"]`. `lazy` (float64): each
        block's forward difference only (1 run; the levels of `exact`'s lazy mode), taken
        further by `refine_direction` where an analytic gradient disagrees."""
        x0 = self.base[name]
        rng = np.random.default_rng(self.seed + 2)
        out, errs = [], []
        start = self.forward_runs
        lazy = lazy and self.is_float64(name)
        self._directions[name] = []
        u = _signs(rng, x0.shape)
        blocks = min(n_blocks, x0.size)
        label = rng.permutation(x0.size) % blocks
        for b in range(blocks):
            ub = np.where(label.reshape(x0.shape) == b, u, 0.0)
            if lazy:
                state = _Direction(self, name, ub)
                self._directions[name].append(state)
                d, e = state.to(1)
            else:
                d, e = self.directional_estimate(name, ub)
            out.append((ub, d))
            errs.append(e)
        info = self.info.setdefault(name, {})
        info["method"] = "fast"
        info["direction_errors"] = errs
        info["forward_runs"] = self.forward_runs - start + info.get("discovery_runs", 0)
        return out

    def refine_direction(self, name: str, i: int):
        """Block i of the last lazy `directions(name)` one level further: (numeric
        derivative, error estimate), or None when it is at the top (or was not lazy)."""
        states = self._directions.get(name) or []
        if i >= len(states) or states[i].level >= 3:
            return None
        start = self.forward_runs
        got = states[i].to(states[i].level + 1)
        info = self.info.setdefault(name, {})
        info["forward_runs"] = info.get("forward_runs", 0) + self.forward_runs - start
        return got

    @staticmethod
    def direction_denominator(u, analytic, numeric_d) -> float:
        terms = np.asarray(analytic, np.float64) * u
        return max(abs(numeric_d), float(np.sqrt((terms ** 2).sum())), GRAD_ABS_FLOOR)

    @classmethod
    def direction_error(cls, u, analytic, numeric_d) -> float:
        g_u = float((np.asarray(analytic, np.float64) * u).sum())
        return abs(g_u - numeric_d) / cls.direction_denominator(u, analytic, numeric_d)

    def localize(self, name: str, analytic: np.ndarray, u: np.ndarray, tol) -> list[Finding]:
        """Bisect the support of a direction that disagreed, down to the wrong elements.
        `tol`: a number, or None for the float64 bound from each estimate's error."""
        analytic = np.asarray(analytic, np.float64)
        found: list[Finding] = []
        stack = [np.flatnonzero(u.reshape(-1))]
        while stack and len(found) < MAX_REPORTED:
            support = stack.pop()
            if support.size == 1:
                i = int(support[0])
                ana = float(analytic.reshape(-1)[i])
                for factor in (1.0, CONFIRM_FACTOR):    # wrong, and confirmed at a smaller step
                    num, e = self.element_estimate(name, i, factor)
                    err = float(relative_error(ana, num))
                    if not err > allowed_error(tol, e, max(abs(num), GRAD_ABS_FLOOR)):
                        break
                else:
                    found.append(Finding(np.unravel_index(i, analytic.shape), ana, num, err))
                continue
            scored = []
            for half in (support[: support.size // 2], support[support.size // 2:]):
                uh = np.zeros(u.size)
                uh[half] = u.reshape(-1)[half]
                uh = uh.reshape(u.shape)
                d, e = self.directional_estimate(name, uh)
                err = self.direction_error(uh, analytic, d)
                if err > allowed_error(tol, e, self.direction_denominator(uh, analytic, d)):
                    scored.append((err, half))
            scored.sort(key=lambda t: t[0])
            stack.extend(h for _, h in scored)   # the worst half is popped first
        return found


CODE_MAX = 1 << 16     # discovery's constant-weight code: at most this many indices


def _code_length(n: int) -> int | None:
    """The least K with C(K, K // 2) >= n (n <= CODE_MAX), else None."""
    if n < 2 or n > CODE_MAX:
        return None
    k = 2
    while math.comb(k, k // 2) < n:
        k += 1
    return k


@functools.lru_cache(maxsize=32)
def _codewords(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(every K-bit integer with exactly K // 2 bits set, ascending; the rank of each K-bit
    integer among them, -1 for the others; the number of bits set in each K-bit integer),
    read-only."""
    ints = np.arange(1 << k, dtype=np.int32)
    weight = np.unpackbits(ints.view(np.uint8).reshape(-1, 4), axis=1).sum(axis=1,
                                                                          dtype=np.uint8)
    words = ints[weight == k // 2]
    rank = np.full(ints.size, -1, np.int32)
    rank[words] = np.arange(words.size, dtype=np.int32)
    for a in (words, rank, weight):
        a.setflags(write=False)
    return words, rank, weight


@functools.lru_cache(maxsize=32)
def _code_decoder(k: int) -> np.ndarray:
    """Per K-bit pattern of runs an output moved in: the rank of its codeword (exactly
    K // 2 bits), -1 for fewer bits (no owner found), -2 for more (it depends on two
    indices); read-only."""
    _, rank, weight = _codewords(k)
    table = np.where(weight > k // 2, -2, rank).astype(np.int32)
    table.setflags(write=False)
    return table


@functools.lru_cache(maxsize=32)
def _bump(seed: int, shape: tuple, delta: float) -> np.ndarray:
    """Discovery's perturbation (uniform in [0.5, 1.5) x delta per element, drawn from
    `seed`), read-only: the same for every engine with this seed, shape and delta."""
    bump = np.random.default_rng(seed).uniform(0.5, 1.5, shape) * delta
    bump.setflags(write=False)
    return bump


@functools.lru_cache(maxsize=32)
def _code_planes(shape: tuple, axes: tuple, k: int) -> np.ndarray:
    """Bit b of the codeword of every element's halved index over `axes` (the joint index
    of i // 2 along them, in order), as k read-only bool arrays of `shape`: which elements
    discovery's code run b perturbs. Depends on the shape only, so made once per shape."""
    codes = _codewords(k)[0]
    joint = 0
    for a in axes:
        joint = joint * ((shape[a] + 1) // 2) + _axis_index(shape, a) // 2
    word = np.broadcast_to(codes[joint], shape)
    planes = ((word[None] >> np.arange(k, dtype=np.int32).reshape((k,) + (1,) * len(shape)))
              & 1).astype(bool)
    planes.setflags(write=False)
    return planes


class _ColourPlan:
    """Which elements each colour perturbs and which element each output's change is
    credited to. The elements of colour c are those at c's indices along the free axes
    (`index(c)`, every index along the separating axes, in order); every valid output is
    credited to the element at position `local` of that list."""

    def __init__(self, s: Structure, cot: np.ndarray):
        self.structure = s
        self._colour_of = None
        shape = s.shape
        valid = None                          # None: every output has an owner
        for a in s.separating:
            o = s.owners[a]
            if o.size and (o.min() < 0 or o.max() >= shape[a]):
                v = (o >= 0) & (o < shape[a])
                valid = v if valid is None else valid & v
        self.all_valid = valid is None or bool(valid.all())
        self.valid = valid
        self.invalid = None if self.all_valid else ~valid
        self.cot = cot if self.all_valid else cot[valid]
        self.acot = np.abs(self.cot)
        self.local = None if self.cot.size else np.zeros(0, np.int64)
        sep_shape = tuple(shape[a] for a in s.separating)
        self.n_local = math.prod(sep_shape) if sep_shape else 1
        if s.separating and self.local is None:
            owners = [s.owners[a] if valid is None else s.owners[a][valid]
                      for a in s.separating]
            self.local = owners[0] if len(owners) == 1 else \
                np.ravel_multi_index(tuple(owners), sep_shape)
        self._layout()
        # colour c perturbs the elements at the free axes' coordinates of c (C order over
        # the free axes), every index along the separating axes: a strided view of the
        # input (basic indexing), in the order of positions in a colour (C order over the
        # separating axes)
        self.shape = shape
        self._free_shape = tuple(shape[a] for a in s.free_axes)
        self.sep_shape = sep_shape        # the view of colour c (index(c))
        self.colours = math.prod(self._free_shape) if self._free_shape else 1
        self.size = math.prod(shape)

    def _per_axes(self, values, axes) -> np.ndarray:
        """`values` (C order over `axes`) broadcast over every element, flat (a copy)."""
        bshape = tuple(n if a in axes else 1 for a, n in enumerate(self.shape))
        return np.broadcast_to(np.asarray(values).reshape(bshape), self.shape).reshape(-1)

    @property
    def colour_of(self) -> np.ndarray:
        """The colour of every element (flat)."""
        if self._colour_of is None:
            self._colour_of = self._per_axes(np.arange(self.colours, dtype=np.int64),
                                             self.structure.free_axes)
        return self._colour_of

    def spread(self, per_local: np.ndarray) -> np.ndarray:
        """A value per position in a colour (n_local, or 1: the same for all) given to
        every element at that position in every colour (flat)."""
        per_local = np.asarray(per_local, np.float64)
        if per_local.size == 1:
            return np.full(self.size, float(per_local.reshape(-1)[0]))
        return self._per_axes(per_local, self.structure.separating)

    @classmethod
    def dense(cls, size: int, cot: np.ndarray) -> "_ColourPlan":
        """Every element its own colour, every output credited to it (Paddle's loop)."""
        return cls(Structure((size,), (), {}), cot)

    def index(self, c: int) -> tuple:
        """Colour c's elements as a basic index into an array of the input's shape (its
        view: the separating axes, in order)."""
        idx = [slice(None)] * len(self.shape)
        for a in reversed(self.structure.free_axes):     # c unravelled over the free axes
            c, idx[a] = divmod(c, self.shape[a])
        return tuple(idx)

    def elements(self, c: int) -> np.ndarray:
        """The flat indices of colour c's elements, in the order of positions in a colour."""
        return np.arange(self.size, dtype=np.int64).reshape(self.shape)[self.index(c)].reshape(-1)

    def _layout(self) -> None:
        """The common layouts of `local` summed as a matrix product instead of a bincount
        (4x faster): each element owns a run of k consecutive outputs (a row-wise op:
        "rows"), or outputs k apart (a broadcast or a column: "cols"), or exactly one
        ("one")."""
        self._kind = "bincount"
        if self.local is None:
            return
        n, m = self.local.size, self.n_local
        if n == 0 or n % m:
            return
        k = n // m
        ar = np.arange(m)
        if k == 1 and np.array_equal(self.local, ar):
            self._kind = "one"
        elif np.array_equal(self.local.reshape(m, k), np.broadcast_to(ar[:, None], (m, k))):
            self._kind, self._ones = "rows", np.ones(k)
        elif np.array_equal(self.local.reshape(k, m), np.broadcast_to(ar, (k, m))):
            self._kind, self._ones = "cols", np.ones(k)

    def credit(self, weights: np.ndarray) -> np.ndarray:
        """Each output's weight summed onto the element it is credited to (n_local sums)."""
        if self.local is None:                         # one element owns every output
            return np.array([weights.sum()])
        if self._kind == "one":
            return weights
        if self._kind == "rows":
            return weights.reshape(self.n_local, -1) @ self._ones
        if self._kind == "cols":
            return self._ones @ weights.reshape(-1, self.n_local)
        return np.bincount(self.local, weights=weights, minlength=self.n_local)


class _Passes:
    """Differences of one input, colour by colour, in the three levels of docs/gradients.md
    ("Lazy levels"; float32 numerics stop at the second). `run(lazy)` takes every colour to
    level 1 (lazy) or to the top; `advance` some colours one level further; `raise_to` every
    colour to at least a level."""

    def __init__(self, richardson: bool, h: np.ndarray, rnd: np.ndarray, plan: _ColourPlan,
                 step):
        self.h, self.rnd, self.plan, self.colours = h, rnd, plan, plan.colours
        self.top = 3 if richardson else 2
        self._step = step
        self.sums = {k: np.zeros(h.size) for k in ((1.0, 1), (1.0, -1), (0.5, 1), (0.5, -1))}
        self.level = np.zeros(self.colours, np.int8)
        self.verified = True
        self.inconsistent = False

    _RUNS = {1: ((1.0, 1),), 2: ((1.0, -1),), 3: ((0.5, 1), (0.5, -1))}

    def _to(self, c: int, target: int) -> bool:
        level = int(self.level[c])
        idx = None
        while level < min(target, self.top):
            level += 1
            for key in self._RUNS[level]:
                got = self._step(c, *key)
                if got is None:
                    self.inconsistent = True
                    return False
                if idx is None:
                    idx = self.plan.index(c)
                self.sums[key].reshape(self.plan.shape)[idx] = got.reshape(
                    self.plan.sep_shape)
            self.level[c] = level
        return True

    def run(self, lazy: bool = False) -> bool:
        target = 1 if lazy and self.top == 3 else self.top
        return all(self._to(c, target) for c in range(self.colours))

    def pending(self) -> bool:
        return not self.verified or bool((self.level < self.top).any())

    def advance(self, elements) -> bool:
        """The colours of `elements` (bool mask over the flat input) one level further;
        False when none could go further."""
        if self.colours == 1:
            want = np.array([bool(elements.any())])
        else:
            want = np.bincount(self.plan.colour_of[elements], minlength=self.colours) > 0
        todo = np.flatnonzero(want & (self.level < self.top))
        for c in todo:
            if not self._to(int(c), int(self.level[c]) + 1):
                break
        return todo.size > 0

    def raise_to(self, level: int) -> None:
        for c in np.flatnonzero(self.level < min(level, self.top)):
            if not self._to(int(c), level):
                return

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(gradient, error estimate), flat."""
        lo, hi = (int(self.level.min()), int(self.level.max())) if self.colours else (2, 2)
        if lo == hi:
            return _at_level(lo, self.sums, self.h, self.rnd)
        per_element = self.level[self.plan.colour_of]
        g, e = np.empty(self.h.size), np.empty(self.h.size)
        for level in range(lo, hi + 1):
            where = per_element == level
            if where.any():
                gl, el = _at_level(level, self.sums, self.h, self.rnd)
                g[where], e[where] = gl[where], el[where]
        return g, e


def _at_level(level: int, sums: dict, h, rnd):
    """(value, error estimate) at `level` from the sums of cot * (f(x + sign * scale * h) -
    f(x)) in `sums`, keyed (scale, sign); `rnd`: the central difference's roundoff. Arrays
    (one value per element) or floats (one direction) alike."""
    if level <= 1:
        return sums[1.0, 1] / h, 2 * rnd
    d1 = (sums[1.0, 1] - sums[1.0, -1]) / (2 * h)
    if level == 2:
        return d1, rnd
    d2 = (sums[0.5, 1] - sums[0.5, -1]) / h
    return (4 * d2 - d1) / 3, np.abs(d2 - d1) / 3 + 3 * rnd


class _Direction:
    """One lazy block of fast mode: the levels of `_Passes` for the directional derivative
    along u (forward difference, central, Richardson), with the step of
    `directional_estimate`."""

    def __init__(self, engine: NumericEngine, name: str, u: np.ndarray):
        # a proxy: the engine keeps its directions, and must not be kept by them
        self.engine = engine if isinstance(engine, weakref.ProxyType) else weakref.proxy(engine)
        self.name, self.u = name, u
        self.t = engine.direction_step(name, u)
        self.rnd = engine._eps(name) * engine.loss_magnitude(name) / self.t
        self.sums: dict[tuple, float] = {}
        self.level = 0

    def to(self, level: int) -> tuple[float, float]:
        e, name = self.engine, self.name
        x0, f0 = e.base[name], e.base_outputs(name)
        try:
            while self.level < level:
                self.level += 1
                for key in _Passes._RUNS[self.level]:
                    scale, sign = key
                    out = e.outputs(name, x0 + (sign * scale * self.t) * self.u, keep=False)
                    self.sums[key] = float(np.dot(e.cot, out - f0))
        finally:
            e.restore(name)
        value, error = _at_level(self.level, self.sums, self.t, self.rnd)
        return float(value), float(error)


def allowed_error(tol, error, denominator):
    """`tol`, or the float64 bound of a numeric value with this error estimate, relative to
    `denominator` (one value: an element, a direction)."""
    return tol if tol is not None else F64_RTOL + ERROR_FACTOR * error / denominator


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
        """The same verdict over only these wrong elements (at least one; e.g. after
        excluding kinks)."""
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
    ana = np.asarray(analytic, np.float64)
    given = numeric is not None
    if given:
        num, est = np.asarray(numeric, np.float64), np.zeros(ana.shape)
    else:
        num, est = engine._exact[name] if name in engine._exact else \
            (engine.exact(name, lazy=True), engine.errors[name])
    if ana.size == 0:
        return Comparison(True, 0.0, size=0)
    vacuous = float(np.abs(num).max()) <= VACUOUS_ABS

    def judged(n, e):
        """(relative error against n, a NaN as inf; the allowed error): relative_error and
        float64_bound, the same operations, |n| and its floor computed once."""
        n = np.asarray(n, np.float64)
        m = np.maximum(np.abs(n), GRAD_ABS_FLOOR)
        err = np.abs(ana - n) / m
        allowed = np.full(n.shape, float(tol)) if tol is not None else \
            F64_RTOL + ERROR_FACTOR * np.asarray(e, np.float64) / m
        nan = np.isnan(err)
        return (np.where(nan, np.inf, err) if nan.any() else err), allowed

    err, allowed = judged(num, est)
    bad = err > allowed
    while not given and bad.any() and engine.pending(name):
        # a lazy numeric gradient disagrees: its colours one level further (forward ->
        # central -> Richardson, then the colouring checked), and compare again
        got = engine.settle(name, bad)
        if got is None:
            break
        num, est = got
        err, allowed = judged(num, est)
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
        for i in order[:CONFIRM_MAX]:
            n2, e2 = engine.element_estimate(name, int(i), CONFIRM_FACTOR)
            num2[i] = n2
            lim = float(tol) if tol is not None else float(float64_bound(n2, e2))
            confirmed[i] = not float(relative_error(float(ana.reshape(-1)[i]), n2)) <= lim
        if confirmed.any():
            confirmed[order[CONFIRM_MAX:]] = True   # not re-checked: reported as found
        elif order.size > CONFIRM_MAX:
            full, est2 = engine.refined(name)
            err2, allowed2 = judged(full, est2)
            confirmed = (bad & (err2 > allowed2)).reshape(-1)
            num2 = full.reshape(-1)
        confirmed = confirmed.reshape(ana.shape)
        num2 = num2.reshape(ana.shape)
    unconfirmed = int(bad.sum() - confirmed.sum())
    if not confirmed.any():
        return Comparison(True, float(err.max()), size=ana.size, unconfirmed=unconfirmed,
                          vacuous=vacuous)
    return _verdict(ana, num, num2, err, allowed, confirmed, unconfirmed, vacuous)


def _verdict(ana, num, num2, err, allowed, confirmed, unconfirmed, vacuous) -> Comparison:
    """The failed Comparison over the `confirmed` elements (at least one)."""
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
