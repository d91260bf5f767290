"""Broken ops for the derived cases of issue 45 point 5, each with a correct twin
(`broken_*` / `good_*`); OpTests in test_derivation_breakers.py. Each bug sits where the
author's case never goes and only the new derivation reaches it.

| broken op | bug | found by |
| --- | --- | --- |
| broken_rowsum_div | rows counted as `x.size // x.shape[-1]`: ZeroDivisionError (Paddle: SIGFPE) when the last dim is 0 | empty (every dim cut to 0) |
| broken_naive_norm | row norm as sqrt(sum(x * x)): float32 squares overflow where the norm is finite | extremal (spread) |
| broken_sq_ratio | x^2 / (x^2 + 1) as written: inf / inf at float32's largest finite value | extremal (max_finite) |
| broken_prod_rows | row product's gradient as Out / X: 0 / 0 where X holds a zero | kinks (NaN where the slopes are finite) |
| broken_axis_cumsum | `np.cumsum(x, axis)` on a 0-D input: numpy flattens it to shape [1] where infer_shape says [] | explore (0-D, axis adapted) |
| broken_two_causes | mode "max" refused (a declared value), and NaN dropped by nansum | explore (both causes reported) |
"""
import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, enforce, errors,
                   grad_var_name, register_kernel, register_operator)
from opkit.framework import domains as D

DX, DOUT = grad_var_name("X"), grad_var_name("Out")


def _maker(attrs=(), domains=None):
    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) X.")
            self.add_output("Out", "(Tensor) output.")
            for name, kind, default, doc, *checks in attrs:
                a = self.add_attr(name, kind, doc, default)
                for c in checks:
                    c(a)
                if domains and name in domains:
                    a.set_domain(domains[name])
            self.add_comment("A deliberately broken op (or its correct twin).")
    return Maker


def _op(shape):
    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", shape(ctx, list(ctx.get_input_dim("X"))))
    return Op


class _GradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(DX, ctx.get_input_dim("X"))


def _grad_maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input("X", self.input("X"))
            op.set_input("Out", self.output("Out"))
            op.set_input(DOUT, self.output_grad("Out"))
            op.set_output(DX, self.input_grad("X"))
            return [op]
    return Maker


def _pair(name, maker, op_cls, kernel, grad=None):
    for kind in ("broken", "good"):
        t = f"{kind}_{name}"
        if grad is None:
            register_operator(t, op_cls, maker)
        else:
            register_operator(t, op_cls, maker, grad_maker=_grad_maker(t + "_grad"))
            register_operator(t + "_grad", _GradOp)
            register_kernel(t + "_grad")(grad(kind == "broken"))
        register_kernel(t, dtypes=("float32", "float64"))(kernel(kind == "broken"))


def _rows(ctx, dims):
    enforce(len(dims) >= 1, "X must have a dimension")
    return dims[:-1]


# -- empty: a zero-size last dim -----------------------------------------------------------
def _rowsum(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: the row count divides by the last dim's size
            rows = x.size // x.shape[-1]
            out = x.reshape(rows, x.shape[-1]).sum(axis=1).reshape(x.shape[:-1])
        else:
            out = x.sum(axis=-1)
        ctx.set_output("Out", out.astype(x.dtype))
    return kernel


_pair("rowsum_div", _maker(), _op(_rows), _rowsum)


# -- extremal: spread magnitudes, the largest finite value ---------------------------------
def _norm(broken):
    def kernel(ctx):
        x = ctx.input("X")
        with np.errstate(over="ignore"):
            if broken:   # BUG: squares before it scales
                out = np.sqrt((x * x).sum(axis=-1))
            else:
                m = np.abs(x).max(axis=-1, keepdims=True)
                m = np.where(m > 0, m, 1).astype(x.dtype)
                out = m[..., 0] * np.sqrt(((x / m) ** 2).sum(axis=-1))
        ctx.set_output("Out", out.astype(x.dtype))
    return kernel


_pair("naive_norm", _maker(), _op(_rows), _norm)


def _sq_ratio(broken):
    def kernel(ctx):
        x = ctx.input("X")
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if broken:   # BUG: x * x overflows at the top of the range: inf / inf
                out = x * x / (x * x + 1)
            else:
                big = np.abs(x) > 1
                r = np.where(big, 1 / np.where(big, x, 1), 0)
                out = np.where(big, 1 / (1 + r * r), x * x / (x * x + 1))
        ctx.set_output("Out", out.astype(x.dtype))
    return kernel


_pair("sq_ratio", _maker(), _op(lambda ctx, dims: dims), _sq_ratio)


# -- kinks: a gradient that divides by the input -------------------------------------------
def _prod(broken):
    def kernel(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", np.prod(x, axis=-1).astype(x.dtype))
    return kernel


def _prod_grad(broken):
    def kernel(ctx):
        x, out, dout = ctx.input("X"), ctx.input("Out"), ctx.input(DOUT)
        with np.errstate(invalid="ignore", divide="ignore"):
            if broken:   # BUG: Out / X is 0 / 0 where X holds a zero
                others = out[..., None] / x
            else:
                others = np.stack([np.prod(np.delete(x, i, axis=-1), axis=-1)
                                   for i in range(x.shape[-1])], axis=-1)
        ctx.set_output(DX, (dout[..., None] * others).astype(x.dtype))
    return kernel


_pair("prod_rows", _maker(), _op(_rows), _prod, grad=_prod_grad)


# -- explore: 0-D with the axis adapted ----------------------------------------------------
def _same_axis(ctx, dims):
    a, r = ctx.attr("axis"), max(len(dims), 1)
    enforce(-r <= a < r, "axis %s is out of range for rank %s", a, len(dims))
    return dims


def _cumsum(broken):
    def kernel(ctx):
        x, a = ctx.input("X"), ctx.attr("axis")
        if not broken and x.ndim == 0:
            ctx.set_output("Out", x.copy())    # a 0-D input is its own cumulative sum
            return
        ctx.set_output("Out", np.cumsum(x, axis=a).astype(x.dtype))   # BUG: 0-D, axis 0
    return kernel


_pair("axis_cumsum", _maker(attrs=[("axis", "int", -1, "axis")],
                            domains={"axis": D.axis_of("X")}),
      _op(_same_axis), _cumsum)


# -- explore: two distinct causes in one case ----------------------------------------------
def _reduce(broken):
    def kernel(ctx):
        x, mode = ctx.input("X"), ctx.attr("mode")
        if mode == "max":
            if broken:   # BUG 1: a declared value refused by the kernel
                raise errors.Unimplemented("mode 'max' is not implemented")
            out = x.max(axis=-1)
        else:            # BUG 2: NaN dropped
            out = (np.nansum if broken else np.sum)(x, axis=-1)
        ctx.set_output("Out", out.astype(x.dtype))
    return kernel


_pair("two_causes", _maker(attrs=[("mode", "string", "sum", "reduction",
                                   lambda a: a.in_set(["sum", "max"]))]),
      _op(_rows), _reduce)
