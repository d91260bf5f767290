"""Broken ops the `explore` check exists for, each with a correct twin (`broken_*` /
`good_*`). Each is modelled on a bug reported in a framework's tracker; in every one the
author's own OpTest case (explore_breakers_optests.py) passes -- the bug sits where the case
never goes (a NaN, a negative, an exact half, another attr value, a pair of flags, another
rank).

| broken op | bug (modelled on) | found by |
| --- | --- | --- |
| broken_nan_argmax | arg-max steps over NaN (mlx #4274, jax #4640, mxnet #16216) | NaN |
| broken_fmax_rowmax | row max with `fmax`: NaN dropped (mlx #4072) | NaN |
| broken_nan_clip | clip via fmin/fmax: NaN becomes a bound (glm #18) | NaN |
| broken_zero_pad_maxpool | max pool pads with 0, not -inf (pytorch #41294, mxnet #2753) | negatives |
| broken_zero_init_segmax | segment max starts from 0 (all-negative rows give 0) | negatives |
| broken_leaky_max | leaky_relu as max(x, alpha x): wrong for alpha > 1 (TF #24566) | attr values |
| broken_cumsum_flags | cumsum exclusive + reverse together wrong (ORT #13165) | attr pairs |
| broken_fmod_mod | elementwise mod with C's fmod sign (Paddle/PyTorch remainder) | negatives |
| broken_trunc_floordiv | floor_divide truncates toward 0 | negatives |
| broken_even_round | round half to even where the op rounds half away from 0 | halves |
| broken_floor_cast | float -> int cast by floor, not truncation | negatives |
| broken_wrap_embedding | embedding lets negative ids wrap, raw IndexError above (TF gather) | int extremes |
| broken_roll_shift | roll by slicing: a shift above the dim size is wrong (Theano #4662) | attr values |
| broken_inf_logsumexp | m + log(sum(exp(x - m))) with m = inf gives NaN | +inf |
| broken_nan_sign | sign as (x > 0) - (x < 0): sign(NaN) = 0 | NaN |
| broken_last_tie_argmin | arg-min returns the last of tied minima | ties |
| broken_sorted_axes_sum | reduce over `dim` assuming it is sorted | axes order |
| broken_rank2_rowsum | "sum over the last axis" written as axis=1 | other ranks |
| broken_0d_softmax | softmax reshapes to (-1, last dim): IndexError on a 0-D input | 0-D |
| broken_nhwc_bias | channel bias ignores data_format NHWC | value sets |
| broken_neg_pow | pow as exp(f log x): NaN for negative bases | negatives |
| broken_asym_pad | 1-D pad uses paddings[0] on both sides | int lists |
| broken_isclose_nan | isclose ignores equal_nan (needs NaN and the flag together) | attr + NaN |
| broken_perm_transpose | transpose's grad applies perm, not its inverse | perms (grads) |
| broken_onehot_wrap | one_hot: ids >= depth silently give a zero row, not an error | int extremes |
| broken_logabs_prod | prod's grad through log abs(x): the sign of negative factors lost (pytorch #995) | negatives (grads) |
| broken_masked_mean | masked mean divides 0 by 0 on an all-False row (pytorch #85063 family) | bool inputs |
"""
import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, enforce, errors,
                   grad_var_name, register_kernel, register_operator)
from opkit.framework import domains as D

DX, DOUT = grad_var_name("X"), grad_var_name("Out")


def _maker(inputs=("X",), attrs=(), domains=None, input_domains=None, params=()):
    class Maker(OpMaker):
        def make(self):
            for name in inputs:
                v = self.add_input(name, f"(Tensor) {name}.")
                if input_domains and name in input_domains:
                    v.set_domain(input_domains[name])
                if name in params:
                    v.as_parameter()
            self.add_output("Out", "(Tensor) output.")
            for name, kind, default, doc, *checks in attrs:
                a = self.add_attr(name, kind, doc, default)
                for c in checks:
                    c(a)
                if domains and name in domains:
                    a.set_domain(domains[name])
            self.add_comment("A deliberately broken op (or its correct twin).")
    return Maker


class _ShapeOp(OperatorWithKernel):
    """Out's dims (and dtype) from `shape(ctx, dims)`; dtype None: X's."""

    shape = staticmethod(lambda ctx, dims: dims)
    out_dtype = None

    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", self.shape(ctx, list(ctx.get_input_dim("X"))))
        if self.out_dtype:
            ctx.set_output_dtype("Out", self.out_dtype)


def _op(shape=None, out_dtype=None):
    attrs = {"out_dtype": out_dtype}
    if shape is not None:
        attrs["shape"] = staticmethod(shape)
    return type("Op", (_ShapeOp,), attrs)


def _pair(name, maker, op_cls, kernel, dtypes=("float32", "float64"), grad=None):
    """Register broken_<name> and good_<name>; kernel(broken) -> fn(ctx)."""
    for kind in ("broken", "good"):
        t = f"{kind}_{name}"
        if grad is None:
            register_operator(t, op_cls, maker)
        else:
            register_operator(t, op_cls, maker, grad_maker=_grad_maker(t + "_grad"))
            register_operator(t + "_grad", _GradOp)
            register_kernel(t + "_grad")(grad(kind == "broken"))
        register_kernel(t, dtypes=dtypes)(kernel(kind == "broken"))


class _GradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(DX, ctx.get_input_dim("X"))


def _grad_maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input("X", self.input("X"))
            op.set_input(DOUT, self.output_grad("Out"))
            op.set_output(DX, self.input_grad("X"))
            return [op]
    return Maker


def _axis_dims(ctx, dims):
    a = ctx.attr("axis")
    enforce(len(dims) >= 1, "X must have a dimension")
    enforce(-len(dims) <= a < max(len(dims), 1), "axis %s is out of range for rank %s",
            a, len(dims))
    return [d for i, d in enumerate(dims) if i != a % len(dims)]


# -- NaN ---------------------------------------------------------------------------------------
def _argmax(broken):
    def kernel(ctx):
        x, a = ctx.input("X"), ctx.attr("axis")
        if broken:   # BUG: a comparison-based scan: NaN never compares greater
            x = np.where(np.isnan(x), -np.inf, x)
        ctx.set_output("Out", np.argmax(x, axis=a).astype(np.int64))
    return kernel


_pair("nan_argmax", _maker(attrs=[("axis", "int", -1, "axis")],
                           domains={"axis": D.axis_of("X")}),
      _op(_axis_dims, "int64"), _argmax)


def _rowmax(broken):
    def kernel(ctx):
        x = ctx.input("X")
        f = np.fmax if broken else np.maximum     # BUG: fmax ignores NaN
        ctx.set_output("Out", f.reduce(x, axis=-1))
    return kernel


def _last_dropped(ctx, dims):
    enforce(len(dims) >= 1, "X must have a dimension")
    return dims[:-1]


_pair("fmax_rowmax", _maker(), _op(_last_dropped), _rowmax)


def _clip(broken):
    def kernel(ctx):
        x, lo, hi = ctx.input("X"), ctx.attr("min"), ctx.attr("max")
        if broken:   # BUG: fmin/fmax return the bound for NaN
            ctx.set_output("Out", np.fmin(np.fmax(x, lo), hi))
        else:
            ctx.set_output("Out", np.minimum(np.maximum(x, lo), hi))
    return kernel


_pair("nan_clip", _maker(attrs=[("min", "float", -0.5, "min"), ("max", "float", 0.5, "max")]),
      _op(), _clip)


def _sign(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: sign(NaN) = 0
            ctx.set_output("Out", ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)))
        else:
            ctx.set_output("Out", np.sign(x))
    return kernel


_pair("nan_sign", _maker(), _op(), _sign)


def _logsumexp(broken):
    def kernel(ctx):
        x = ctx.input("X")
        m = x.max(axis=-1, keepdims=True)
        if not broken:   # the twin: a non-finite max is not subtracted
            m = np.where(np.isfinite(m), m, 0)
        with np.errstate(all="ignore"):
            out = m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True))   # BUG: inf - inf
        ctx.set_output("Out", out[..., 0])
    return kernel


_pair("inf_logsumexp", _maker(), _op(_last_dropped), _logsumexp)


def _isclose(broken):
    def kernel(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        eq = bool(ctx.attr("equal_nan")) and not broken   # BUG: equal_nan ignored
        ctx.set_output("Out", np.isclose(x, y, rtol=ctx.attr("rtol"), atol=ctx.attr("atol"),
                                         equal_nan=eq))
    return kernel


class _IscloseOp(_ShapeOp):
    out_dtype = "bool"

    def infer_shape(self, ctx):
        enforce(list(ctx.get_input_dim("X")) == list(ctx.get_input_dim("Y")) or
                -1 in ctx.get_input_dim("X") or -1 in ctx.get_input_dim("Y"),
                "X and Y must have one shape")
        super().infer_shape(ctx)


_pair("isclose_nan", _maker(inputs=("X", "Y"), attrs=[
    ("rtol", "float", 1e-5, "rtol"), ("atol", "float", 1e-8, "atol"),
    ("equal_nan", "bool", False, "whether NaN equals NaN")]), _IscloseOp, _isclose)


# -- negatives ---------------------------------------------------------------------------------
def _pool_dims(ctx, dims):
    enforce(len(dims) == 3, "X must be [N, C, L], got rank %s", len(dims))
    k, p, s = ctx.attr("ksize"), ctx.attr("paddings"), ctx.attr("strides")
    out = dims[:2] + [(dims[2] + 2 * p - k) // s + 1 if dims[2] >= 0 else -1]
    enforce(out[2] == -1 or out[2] > 0, "the window does not fit")
    return out


def _maxpool(broken):
    def kernel(ctx):
        x = ctx.input("X")
        k, p, s = ctx.attr("ksize"), ctx.attr("paddings"), ctx.attr("strides")
        fill = 0.0 if broken else -np.inf        # BUG: zero padding for a max
        xp = np.pad(x, [(0, 0), (0, 0), (p, p)], constant_values=fill)
        n = (x.shape[2] + 2 * p - k) // s + 1
        ctx.set_output("Out", np.stack([xp[:, :, i * s:i * s + k].max(axis=2)
                                        for i in range(n)], axis=2))
    return kernel


_pair("zero_pad_maxpool", _maker(attrs=[
    ("ksize", "int", 3, "window", lambda a: a.greater_than(0)),
    ("strides", "int", 1, "stride", lambda a: a.greater_than(0)),
    ("paddings", "int", 1, "padding on both sides", lambda a: a.equal_greater_than(0))]),
    _op(_pool_dims), _maxpool)


def _segmax(broken):
    def kernel(ctx):
        x = ctx.input("X")
        seg = ctx.attr("segments")
        enforce(x.shape[0] % seg == 0, "X's rows must split into %s segments", seg)
        parts = x.reshape((seg, -1) + x.shape[1:])
        if broken:    # BUG: the running max starts from 0
            ctx.set_output("Out", np.max(parts, axis=1, initial=0.0))
        else:
            ctx.set_output("Out", np.max(parts, axis=1))
    return kernel


def _seg_dims(ctx, dims):
    enforce(len(dims) >= 1, "X must have rows")
    seg = ctx.attr("segments")
    enforce(dims[0] < 0 or (dims[0] % seg == 0 and dims[0] > 0),
            "X's %s rows must split into %s non-empty segments", dims[0], seg)
    return [seg] + dims[1:]


_pair("zero_init_segmax", _maker(attrs=[("segments", "int", 2, "segments",
                                         lambda a: a.greater_than(0))]),
      _op(_seg_dims), _segmax)


def _mod(broken):
    def kernel(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        f = np.fmod if broken else np.mod      # BUG: C's sign convention (the dividend's)
        ctx.set_output("Out", f(x, y))
    return kernel


class _BinaryOp(_ShapeOp):
    def infer_shape(self, ctx):
        x, y = list(ctx.get_input_dim("X")), list(ctx.get_input_dim("Y"))
        enforce(len(x) == len(y) and all(a == b or a < 0 or b < 0 for a, b in zip(x, y)),
                "X %s and Y %s must have one shape", x, y)
        super().infer_shape(ctx)


_pair("fmod_mod", _maker(inputs=("X", "Y")), _BinaryOp, _mod,
      dtypes=("float32", "float64", "int32", "int64"))


def _floordiv(broken):
    def kernel(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        enforce(not (y == 0).any(), "floor_divide by zero")
        if broken:   # BUG: truncation toward zero
            ctx.set_output("Out", (np.trunc(x / y)).astype(x.dtype))
        else:
            ctx.set_output("Out", np.floor_divide(x, y))
    return kernel


_pair("trunc_floordiv", _maker(inputs=("X", "Y")), _BinaryOp, _floordiv,
      dtypes=("int32", "int64"))


def _cast(broken):
    def kernel(ctx):
        x = ctx.input("X")
        dt = ctx.attr("out_dtype")
        if broken and np.dtype(dt).kind == "i":
            x = np.floor(x)       # BUG: floor, where C's conversion truncates toward 0
        ctx.set_output("Out", x.astype(dt))
    return kernel


class _CastOp(_ShapeOp):
    def infer_shape(self, ctx):
        dt = ctx.attr("out_dtype")
        enforce(dt in ("int32", "int64", "float64"), "attr out_dtype must be int32, int64 or "
                "float64, got %s", dt)      # an unknown name refused when the op is built
        super().infer_shape(ctx)
        ctx.set_output_dtype("Out", dt)


_pair("floor_cast", _maker(attrs=[("out_dtype", "string", "int32", "the output dtype")],
                           domains={"out_dtype": D.dtype(["int32", "int64", "float64"])}),
      _CastOp, _cast)


def _pow(broken):
    def kernel(ctx):
        x, f = ctx.input("X"), ctx.attr("factor")
        with np.errstate(all="ignore"):
            if broken:    # BUG: exp(f log x) is NaN for a negative base
                ctx.set_output("Out", np.exp(f * np.log(x)))
            else:
                ctx.set_output("Out", np.power(x, f))
    return kernel


_pair("neg_pow", _maker(attrs=[("factor", "float", 3.0, "the exponent")]), _op(), _pow)


# -- halves, ties --------------------------------------------------------------------------------
def _round(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: numpy's half-to-even; the op rounds half away from zero
            ctx.set_output("Out", np.round(x))
        else:
            ctx.set_output("Out", np.sign(x) * np.floor(np.abs(x) + 0.5))
    return kernel


_pair("even_round", _maker(), _op(), _round)


def _argmin(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: the last of tied minima
            idx = x.shape[-1] - 1 - np.argmin(x[..., ::-1], axis=-1)
        else:
            idx = np.argmin(x, axis=-1)
        ctx.set_output("Out", idx.astype(np.int64))
    return kernel


_pair("last_tie_argmin", _maker(), _op(_last_dropped, "int64"), _argmin)


# -- attr values ---------------------------------------------------------------------------------
def _leaky(broken):
    def kernel(ctx):
        x, a = ctx.input("X"), ctx.attr("alpha")
        if broken:   # BUG: max(x, a x) is leaky_relu only for 0 <= a <= 1
            ctx.set_output("Out", np.maximum(x, a * x))
        else:
            ctx.set_output("Out", np.where(x >= 0, x, a * x))
    return kernel


_pair("leaky_max", _maker(attrs=[("alpha", "float", 0.02, "the slope below 0")]), _op(),
      _leaky)


def _roll(broken):
    def kernel(ctx):
        x, s = ctx.input("X"), ctx.attr("shift")
        if broken:   # BUG: slicing without s % n
            ctx.set_output("Out", np.concatenate([x[-s:], x[:-s]]) if s else x.copy())
        else:
            ctx.set_output("Out", np.roll(x, s, axis=0))
    return kernel


_pair("roll_shift", _maker(attrs=[("shift", "int", 1, "rows to roll by")]), _op(), _roll)


def _pad(broken):
    def kernel(ctx):
        x, p = ctx.input("X"), ctx.attr("paddings")
        before, after = (p[0], p[0]) if broken else (p[0], p[1])   # BUG: one side's pad
        ctx.set_output("Out", np.pad(x, [(0, 0)] * (x.ndim - 1) + [(before, after)],
                                     constant_values=ctx.attr("value")))
    return kernel


def _pad_dims(ctx, dims):
    p = ctx.attr("paddings")
    enforce(len(p) == 2, "paddings must be [before, after]")
    enforce(len(dims) >= 1, "X must have a dimension")
    return dims[:-1] + [dims[-1] + p[0] + p[1] if dims[-1] >= 0 else -1]


_pair("asym_pad", _maker(attrs=[
    ("paddings", "ints", [1, 1], "[before, after] of the last dim",
     lambda a: a.equal_greater_than(0)),
    ("value", "float", 0.0, "the pad value")]), _op(_pad_dims), _pad)


# -- attr pairs, value sets ------------------------------------------------------------------------
def _cumsum(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if x.ndim == 0:
            ctx.set_output("Out", x * 0 if ctx.attr("exclusive") else x.copy())
            return
        excl, rev = ctx.attr("exclusive"), ctx.attr("reverse")
        y = x[::-1] if rev else x
        c = np.cumsum(y, axis=0)
        if excl:
            c = c - y
            if broken and rev:     # BUG: with both flags, the result is left reversed
                ctx.set_output("Out", c)
                return
        ctx.set_output("Out", c[::-1] if rev else c)
    return kernel


_pair("cumsum_flags", _maker(attrs=[("exclusive", "bool", False, "exclusive"),
                                    ("reverse", "bool", False, "reverse")]), _op(), _cumsum)


def _bias(broken):
    def kernel(ctx):
        x, b = ctx.input("X"), ctx.input("Bias")
        nhwc = ctx.attr("data_format") == "NHWC" and not broken   # BUG: NHWC ignored
        shape = (1, 1, 1, -1) if nhwc else (1, -1, 1, 1)
        ctx.set_output("Out", x + b.reshape(shape))
    return kernel


class _BiasOp(_ShapeOp):
    def infer_shape(self, ctx):
        x, b = list(ctx.get_input_dim("X")), list(ctx.get_input_dim("Bias"))
        enforce(len(x) == 4 and len(b) == 1, "X must be 4-D and Bias 1-D")
        c = x[3] if ctx.attr("data_format") == "NHWC" else x[1]
        enforce(c < 0 or b[0] < 0 or c == b[0], "Bias has %s entries, X has %s channels",
                b[0], c)
        super().infer_shape(ctx)


_pair("nhwc_bias", _maker(inputs=("X", "Bias"), attrs=[
    ("data_format", "string", "NCHW", "layout", lambda a: a.in_set(["NCHW", "NHWC"]))],
    params=("Bias",)), _BiasOp, _bias)


# -- axes order, other ranks, 0-D ------------------------------------------------------------------
def _axes_sum(broken):
    def kernel(ctx):
        x, dims = ctx.input("X"), [int(d) % max(ctx.input("X").ndim, 1)
                                   for d in ctx.attr("dim")]
        if broken:   # BUG: removes the axes one by one, assuming they are sorted
            out = x
            for k, d in enumerate(dims):
                out = out.sum(axis=d - k)
            ctx.set_output("Out", out)
        else:
            ctx.set_output("Out", x.sum(axis=tuple(dims)))
    return kernel


def _axes_dims(ctx, dims):
    axes = [int(d) for d in ctx.attr("dim")]
    enforce(all(-len(dims) <= d < len(dims) for d in axes), "dim %s out of range", axes)
    norm = [d % len(dims) for d in axes]
    enforce(len(set(norm)) == len(norm), "dim %s repeats an axis", axes)
    return [d for i, d in enumerate(dims) if i not in norm]


_pair("sorted_axes_sum", _maker(attrs=[("dim", "ints", [0], "axes to sum over")],
                                domains={"dim": D.axes_of("X")}),
      _op(_axes_dims), _axes_sum)


def _rowsum(broken):
    def kernel(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", x.sum(axis=1 if broken else -1))   # BUG: rank 2 assumed
    return kernel


_pair("rank2_rowsum", _maker(), _op(_last_dropped), _rowsum)


def _softmax(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: x.shape[-1] does not exist for a 0-D input
            x2 = x.reshape(-1, x.shape[-1])
        else:
            x2 = x.reshape(-1, x.shape[-1] if x.ndim else 1)
        e = np.exp(x2 - x2.max(axis=1, keepdims=True))
        ctx.set_output("Out", (e / e.sum(axis=1, keepdims=True)).reshape(x.shape))
    return kernel


_pair("0d_softmax", _maker(), _op(), _softmax)


# -- integer extremes ------------------------------------------------------------------------------
def _embedding(broken):
    def kernel(ctx):
        w, ids = ctx.input("W"), ctx.input("Ids")
        if not broken:
            bad = (ids < 0) | (ids >= w.shape[0])
            if bad.any():
                raise errors.InvalidArgument("Ids holds %s, outside [0, %s)",
                                             ids[bad][:3].tolist(), w.shape[0])
        ctx.set_output("Out", w[ids.reshape(-1)])   # BUG: -1 wraps to the last row
    return kernel


class _EmbeddingOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        w, ids = list(ctx.get_input_dim("W")), list(ctx.get_input_dim("Ids"))
        enforce(len(w) == 2, "W must be 2-D")
        n = -1 if -1 in ids else int(np.prod(ids, dtype=np.int64))
        ctx.set_output_dim("Out", [n, w[1]])


class _EmbeddingMaker(OpMaker):
    def make(self):
        self.add_input("W", "(Tensor) the table [V, D].").as_parameter()
        self.add_input("Ids", "(Tensor<int64>) ids.").set_domain(
            D.integers(0, D.dim("W", 0)))
        self.add_output("Out", "(Tensor) rows.")
        self.add_comment("A deliberately broken embedding (or its correct twin).")


for _kind in ("broken", "good"):
    register_operator(f"{_kind}_wrap_embedding", _EmbeddingOp, _EmbeddingMaker)
    register_kernel(f"{_kind}_wrap_embedding")(_embedding(_kind == "broken"))


def _onehot(broken):
    def kernel(ctx):
        ids, depth = ctx.input("X"), ctx.attr("depth")
        flat = ids.reshape(-1)
        if not broken:
            enforce(((flat >= 0) & (flat < depth)).all(),
                    "X holds ids outside [0, depth=%s)", depth)
        out = np.zeros((flat.size, depth))
        ok = (flat >= 0) & (flat < depth)     # BUG: out-of-range ids give a zero row
        out[np.nonzero(ok)[0], flat[ok]] = 1.0
        ctx.set_output("Out", out.reshape(ids.shape + (depth,)))
    return kernel


class _OneHotOp(_ShapeOp):
    out_dtype = "float64"

    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", list(ctx.get_input_dim("X")) + [ctx.attr("depth")])
        ctx.set_output_dtype("Out", "float64")


_pair("onehot_wrap", _maker(attrs=[("depth", "int", 4, "classes", lambda a: a.greater_than(0))],
                            input_domains={"X": D.integers(0, D.attr("depth"))}),
      _OneHotOp, _onehot, dtypes=("int32", "int64"))


# -- permutations (gradients) ----------------------------------------------------------------------
def _transpose(broken):
    def kernel(ctx):
        ctx.set_output("Out", np.transpose(ctx.input("X"), ctx.attr("perm")).copy())
    return kernel


def _transpose_grad(broken):
    def kernel(ctx):
        d, perm = ctx.input(DOUT), list(ctx.attr("perm"))
        inv = perm if broken else list(np.argsort(perm))   # BUG: perm is its own inverse
        ctx.set_output(DX, np.transpose(d, inv).copy())    # only for involutions
    return kernel


def _perm_dims(ctx, dims):
    perm = list(ctx.attr("perm"))
    enforce(sorted(perm) == list(range(len(dims))), "perm %s is no permutation of rank %s",
            perm, len(dims))
    return [dims[p] for p in perm]


_pair("perm_transpose", _maker(attrs=[("perm", "ints", [1, 0], "the permutation")],
                               domains={"perm": D.perm_of("X")}),
      _op(_perm_dims), _transpose, grad=_transpose_grad)


# -- gradients on negatives, boolean masks ---------------------------------------------------------
def _prod(broken):
    def kernel(ctx):
        ctx.set_output("Out", np.prod(ctx.input("X"), axis=-1))
    return kernel


def _prod_grad(broken):
    def kernel(ctx):
        x, d = ctx.input("X"), ctx.input(DOUT)
        if broken:   # BUG: through log|x|: the sign of the other factors is lost
            others = np.exp(np.log(np.abs(x)).sum(axis=-1, keepdims=True) - np.log(np.abs(x)))
        else:        # the product of the other factors, exactly (zeros included)
            n = x.shape[-1]
            others = np.stack([np.prod(np.delete(x, i, axis=-1), axis=-1) for i in range(n)],
                              axis=-1)
        ctx.set_output(DX, others * d[..., None])
    return kernel


class _ProdOp(_ShapeOp):
    shape = staticmethod(_last_dropped)


_pair("logabs_prod", _maker(), _ProdOp, _prod, grad=_prod_grad)


def _masked_mean(broken):
    def kernel(ctx):
        x, m = ctx.input("X"), ctx.input("Mask")
        n = m.sum(axis=-1)
        with np.errstate(all="ignore"):
            s = (x * m).sum(axis=-1)
            if broken:   # BUG: an all-False row divides 0 by 0
                ctx.set_output("Out", (s / n).astype(x.dtype))
            else:
                ctx.set_output("Out", np.where(n > 0, s / np.maximum(n, 1), 0.0)
                               .astype(x.dtype))
    return kernel


class _MaskedOp(_ShapeOp):
    def infer_shape(self, ctx):
        enforce(list(ctx.get_input_dim("X")) == list(ctx.get_input_dim("Mask")) or
                -1 in ctx.get_input_dim("X") or -1 in ctx.get_input_dim("Mask"),
                "X and Mask must have one shape")
        enforce(len(ctx.get_input_dim("X")) >= 1, "X must have a dimension")
        ctx.set_output_dim("Out", list(ctx.get_input_dim("X"))[:-1])


_pair("masked_mean", _maker(inputs=("X", "Mask")), _MaskedOp, _masked_mean)
