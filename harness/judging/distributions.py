"""Declared distributions of random ops (`self.distribution = {"Out": Normal(mean="mean",
std="std")}`) and their goodness-of-fit tests, each with a finite-sample bound at the
false-alarm probability `alpha` the `distribution` check gives (docs/harness.md,
"`distribution`": the laws, their parameters and the bounds)."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["Law", "Normal", "Uniform", "Exponential", "Bernoulli", "Categorical", "Sampler",
           "dkw_bound", "hoeffding_bound"]


def dkw_bound(n: int, alpha: float) -> float:
    """e with P(sup |F_n - F| > e) <= alpha (Dvoretzky-Kiefer-Wolfowitz, Massart's constant)."""
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * max(n, 1)))


def hoeffding_bound(n: int, alpha: float, k: int = 1) -> float:
    """t with P(|p_hat - p| >= t for any of k frequencies) <= alpha (Hoeffding, union bound)."""
    return math.sqrt(math.log(2.0 * k / alpha) / (2.0 * max(n, 1)))


def _finite(*xs) -> bool:
    try:
        return all(math.isfinite(float(x)) for x in xs)
    except (TypeError, ValueError):
        return False


class _Spy(dict):
    """An attrs dict that records which attrs a parameter function reads."""

    def __init__(self, attrs):
        super().__init__(attrs)
        self.read: list[str] = []

    def __getitem__(self, key):
        self.get(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        if key not in self.read:
            self.read.append(key)
        return super().get(key, default)


class Law:
    """A declared distribution. Subclasses define `names` (parameter order) and
    `test(samples, values, alpha) -> failure message or None`."""

    names: tuple = ()
    rtol = 1e-6        # discrete laws: how close a sample must be to a declared value (the
    #                    check sets it from the output dtype: 16 eps of float16)

    def __init__(self, *args, of=None, vary=None, **params):
        params.update(zip(self.names, args))
        missing = [n for n in self.names if n not in params]
        if missing:
            raise TypeError(f"{type(self).__name__} needs {', '.join(missing)}")
        self.params = {n: params[n] for n in self.names}
        self.of = of
        self.vary = dict(vary or {})      # attr -> values to try (beside the automatic ones)

    def resolve(self, attrs: dict) -> tuple[dict, list[str]]:
        """(parameter values, names of the attrs they read) for these attrs."""
        spy = _Spy(attrs)
        values = {}
        for name, binding in self.params.items():
            if isinstance(binding, str):
                if binding not in attrs:
                    raise KeyError(f"{type(self).__name__}'s {name} names attr '{binding}', "
                                   f"which the op's attrs do not have")
                values[name] = spy[binding]
            elif callable(binding):
                values[name] = binding(spy)
            else:
                values[name] = binding
        return values, list(spy.read)

    def describe(self, values: dict) -> str:
        def fmt(v):
            if isinstance(v, (list, tuple)):
                return "[" + ", ".join(fmt(x) for x in v) + "]"
            return f"{v:.6g}" if isinstance(v, float) else str(v)

        return f"{type(self).__name__}(" + ", ".join(f"{k}={fmt(v)}" for k, v in values.items()
                                                     if not callable(v)) + ")"

    def valid(self, values: dict) -> bool:
        """Whether these parameter values define a distribution (an attr setting that gives
        std < 0, min >= max or a probability outside [0, 1] is outside the law: not tested)."""
        return True

    def test(self, samples: np.ndarray, values: dict, alpha: float, rng=None) -> str | None:
        raise NotImplementedError


class _Continuous(Law):
    def cdf(self, x: np.ndarray, values: dict) -> np.ndarray:
        raise NotImplementedError

    def support(self, values):
        return -math.inf, math.inf

    def test(self, samples, values, alpha, rng=None):
        x = np.sort(np.asarray(samples, np.float64).reshape(-1))
        n = x.size
        if n == 0:
            return None
        if not np.isfinite(x).all():
            return f"{int((~np.isfinite(x)).sum())} of {n} samples are not finite"
        lo, hi = self.support(values)
        # relative to the finite bounds (an infinite one, Exponential's, would make the
        # slack infinite and the check of the other bound never fire)
        slack = 1e-6 * max([abs(b) for b in (lo, hi) if math.isfinite(b)] + [1.0])
        out = (x < lo - slack) | (x > hi + slack)
        if out.any():
            return (f"{int(out.sum())} of {n} samples lie outside [{lo:.6g}, {hi:.6g}] "
                    f"(e.g. {x[out][0]:.6g})")
        f = self.cdf(x, values)
        i = np.arange(1, n + 1)
        d_plus, d_minus = i / n - f, f - (i - 1) / n
        k = int(np.argmax(np.maximum(d_plus, d_minus)))
        d = float(max(d_plus[k], d_minus[k]))
        e = dkw_bound(n, alpha)
        if d > e:
            return (f"Kolmogorov-Smirnov distance {d:.4f} > {e:.4f} over {n} samples (at "
                    f"{x[k]:.6g}: sample CDF {i[k] / n:.4f}, declared CDF {f[k]:.4f}; sample "
                    f"mean {x.mean():.6g}, std {x.std():.6g})")
        return None


class Normal(_Continuous):
    names = ("mean", "std")

    def valid(self, values):
        return _finite(values["mean"], values["std"]) and float(values["std"]) >= 0

    def cdf(self, x, values):
        mean, std = float(values["mean"]), float(values["std"])
        erf = np.vectorize(math.erf, otypes=[np.float64])
        return 0.5 * (1.0 + erf((x - mean) / (std * math.sqrt(2.0))))

    def test(self, samples, values, alpha, rng=None):
        if float(values["std"]) <= 0:   # a point mass: every sample must be the mean
            x = np.asarray(samples, np.float64).reshape(-1)
            m = float(values["mean"])
            bad = np.abs(x - m) > 1e-6 * max(abs(m), 1.0)
            return (f"std {values['std']} but {int(bad.sum())} of {x.size} samples differ from "
                    f"mean {m:.6g}") if bad.any() else None
        return super().test(samples, values, alpha)


class Uniform(_Continuous):
    names = ("min", "max")

    def valid(self, values):
        return _finite(values["min"], values["max"]) and \
            float(values["min"]) < float(values["max"])

    def support(self, values):
        return float(values["min"]), float(values["max"])

    def cdf(self, x, values):
        lo, hi = float(values["min"]), float(values["max"])
        return np.clip((x - lo) / (hi - lo), 0.0, 1.0)


class Exponential(_Continuous):
    names = ("rate",)

    def valid(self, values):
        return _finite(values["rate"]) and float(values["rate"]) > 0

    def support(self, values):
        return 0.0, math.inf

    def cdf(self, x, values):
        return np.where(x < 0, 0.0, -np.expm1(-float(values["rate"]) * np.maximum(x, 0.0)))


class Categorical(Law):
    names = ("values", "probs")

    def valid(self, values):
        vals = np.asarray(values["values"], np.float64).reshape(-1)
        probs = np.asarray(values["probs"], np.float64).reshape(-1)
        return vals.size == probs.size and bool(np.isfinite(vals).all()) and \
            bool(((probs >= 0) & (probs <= 1)).all()) and abs(float(probs.sum()) - 1) < 1e-9

    def test(self, samples, values, alpha, rng=None):
        x = np.asarray(samples, np.float64).reshape(-1)
        n = x.size
        if n == 0:
            return None
        vals = np.asarray(values["values"], np.float64).reshape(-1)
        probs = np.asarray(values["probs"], np.float64).reshape(-1)
        hit = np.zeros(n, bool)
        counts = []
        for v in vals:
            m = np.abs(x - v) <= self.rtol * max(abs(float(v)), 1.0)
            m &= ~hit
            counts.append(int(m.sum()))
            hit |= m
        if not hit.all():
            bad = x[~hit]
            return (f"{bad.size} of {n} samples are none of the declared values "
                    f"{[float(v) for v in vals]} (e.g. {bad[0]:.6g})")
        t = hoeffding_bound(n, alpha, len(vals))
        for v, p, c in zip(vals, probs, counts):
            if abs(c / n - p) >= t:
                return (f"value {float(v):.6g} has frequency {c / n:.4f} over {n} samples, "
                        f"declared probability {float(p):.4f} (allowed deviation {t:.4f})")
        return None


class Bernoulli(Categorical):
    names = ("p",)

    def valid(self, values):
        return _finite(values["p"]) and 0.0 <= float(values["p"]) <= 1.0

    def test(self, samples, values, alpha, rng=None):
        p = float(values["p"])
        return super().test(samples, {"values": [0.0, 1.0], "probs": [1.0 - p, p]}, alpha)


class Sampler(Law):
    """A reference sampler: `fn(rng, attrs, n)` returns n samples of the declared law."""

    names = ("fn",)

    def resolve(self, attrs):
        spy = _Spy(attrs)
        fn = self.params["fn"]
        fn(np.random.default_rng(0), spy, 1)      # which attrs the sampler reads
        return {"fn": fn, "attrs": dict(attrs)}, list(spy.read)

    def describe(self, values):
        return f"Sampler({getattr(values.get('fn'), '__name__', 'fn')})"

    def test(self, samples, values, alpha, rng=None):
        x = np.sort(np.asarray(samples, np.float64).reshape(-1))
        n = x.size
        if n == 0:
            return None
        rng = rng if rng is not None else np.random.default_rng(0)
        ref = np.sort(np.asarray(values["fn"](rng, dict(values["attrs"]), n),
                              np.float64).reshape(-1))
        m = ref.size
        grid = np.concatenate([x, ref])
        fx = np.searchsorted(x, grid, side="right") / n
        fr = np.searchsorted(ref, grid, side="right") / m
        k = int(np.argmax(np.abs(fx - fr)))
        d = float(abs(fx[k] - fr[k]))
        e = dkw_bound(n, alpha / 2) + dkw_bound(m, alpha / 2)
        if d > e:
            return (f"two-sample Kolmogorov-Smirnov distance {d:.4f} > {e:.4f} against the "
                    f"reference sampler ({n} and {m} samples; at {grid[k]:.6g}: op CDF "
                    f"{fx[k]:.4f}, reference CDF {fr[k]:.4f}; op mean {x.mean():.6g}, std "
                    f"{x.std():.6g}, reference mean {ref.mean():.6g}, std {ref.std():.6g})")
        return None


def dropout_laws(prob: str = "dropout_prob",
                 implementation: str | None = "dropout_implementation",
                 upscale: bool = False) -> dict:
    """The laws of Paddle's dropout in training: `Mask ~ Bernoulli(1 - p)`, and `Out / X`
    (where X != 0) is 0 with probability p and the kept scale otherwise (1, or 1 / (1 - p)
    with `upscale_in_train`); both implementations are tried."""

    def kept(a):
        p = a[prob]
        if implementation and a.get(implementation) == "upscale_in_train" or \
                not implementation and upscale:     # PyTorch's dropout: always upscales
            return 1.0 / (1.0 - p) if p < 1 else 0.0
        return 1.0

    def ratio(outs, ins):
        x = np.asarray(ins["X"], np.float64)
        return np.asarray(outs["Out"], np.float64)[x != 0] / x[x != 0]

    vary = {implementation: ["downgrade_in_infer", "upscale_in_train"]} if implementation \
        else {}
    return {"Mask": Bernoulli(p=lambda a: 1.0 - a[prob]),
            "Out / X": Categorical(values=lambda a: [0.0, kept(a)],
                                   probs=lambda a: [a[prob], 1.0 - a[prob]], of=ratio,
                                   vary=vary)}
