"""float16 / bfloat16 bugs, each with a correct twin (good_*), every op with float32 and
float64 kernels too:

- broken_lp_row_sum: Out[i] = sum_j X[i, j] accumulated in the storage dtype, one element
  after the other (`precision`: the error grows with the row length like float16's epsilon);
  good_lp_row_sum accumulates in float32 and rounds once.
- broken_lp_row_norm: Out[i] = sqrt(sum_j X[i, j]^2) with the squares made in the storage
  dtype: past |x| = 256 a float16 square is inf (`dtypes`: overflow in an intermediate);
  good_lp_row_norm squares in float32, scaled by the row's largest magnitude.
- broken_lp_scale: Out = 1.7 X, the float32 result cast to bfloat16 by truncation (dropping
  the low 16 bits) instead of rounding to nearest even (`precision`); good_lp_scale rounds.
- broken_lp_twin: Out = X^2 with float16 and bfloat16 kernels, but its grad op has a
  float16 kernel only (`dtypes`: no bfloat16 gradient); good_lp_twin has both.
- broken_lp_halve: Out = X / 2 computed as (2 X) / 4 in the storage dtype: past
  |x| = 32752 a float16 2 X is inf, so only values near float16's top of range (65504) go
  wrong (`explore`, which derives them for a float16 case); good_lp_halve is X / 2.
"""
import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, enforce, errors, grad_var_name,
                   register_kernel, register_operator)
from opkit.framework.dtypes import bfloat16
from opkit.framework.low_precision import compute_in_float32

FLOATS = ("float32", "float64")
LOW = ("float16", "bfloat16")


class _Maker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) output.")
        self.add_comment("low-precision breakers")


def _op(rows: bool):
    class _Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            dims = ctx.get_input_dim("X")
            enforce(not rows or len(dims) >= 1, errors.InvalidArgument(
                "X of a row reduction needs at least one dim, got a 0-D X"))
            ctx.set_output_dim("Out", dims[:-1] if rows else dims)

    return _Op


class _GradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))


def _grad_maker(grad_type, with_out=False):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input("X", self.input("X"))
            if with_out:
                op.set_input("Out", self.output("Out"))
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            return [op]
    return Maker


for _name, _rows, _with_out in (("lp_row_sum", True, False), ("lp_row_norm", True, True),
                                ("lp_scale", False, False), ("lp_twin", False, False)):
    for _kind in ("broken", "good"):
        _t = f"{_kind}_{_name}"
        register_operator(_t, _op(_rows), _Maker, grad_maker=_grad_maker(_t + "_grad", _with_out))
        register_operator(_t + "_grad", _GradOp)


# -- row sum ---------------------------------------------------------------------------------
def row_sum(ctx):
    ctx.set_output("Out", ctx.input("X").sum(axis=-1))


def row_sum_grad(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), np.broadcast_to(dout[..., None], x.shape).copy())


def row_sum_in_storage_dtype(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", np.cumsum(x, axis=-1, dtype=x.dtype)[..., -1])   # BUG: float16 sum


# -- row norm --------------------------------------------------------------------------------
def row_norm(ctx):
    x = ctx.input("X")
    # scaled by the row's largest magnitude: no square overflows where the norm is finite
    m = np.abs(x).max(axis=-1, keepdims=True, initial=0.0)
    m = np.where((m > 0) & np.isfinite(m), m, 1).astype(x.dtype)
    out = m[..., 0] * np.sqrt(((x / m) ** 2).sum(axis=-1))
    ctx.set_output("Out", out.astype(x.dtype))


def row_norm_grad(ctx):
    x, out, dout = ctx.input("X"), ctx.input("Out"), ctx.input(grad_var_name("Out"))
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(out[..., None] > 0, x / out[..., None], 0) * dout[..., None]
    ctx.set_output(grad_var_name("X"), g.astype(x.dtype))


def row_norm_squares_in_storage_dtype(ctx):
    x = ctx.input("X")
    with np.errstate(over="ignore"):
        sq = x * x                                            # BUG: inf past |x| = 256
    s = sq.astype(np.float32).sum(axis=-1)
    ctx.set_output("Out", np.sqrt(s).astype(x.dtype))


# -- scale -----------------------------------------------------------------------------------
def scale(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", (x * 1.7).astype(x.dtype))


def scale_grad(ctx):
    dout = ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), (dout * 1.7).astype(dout.dtype))


def scale_truncating(ctx):
    x = ctx.input("X")
    y = x.astype(np.float32) * np.float32(1.7)
    if x.dtype == bfloat16:                                   # BUG: truncation
        y = (np.ascontiguousarray(y).view(np.uint32) >> 16).astype(np.uint16).view(bfloat16)
    else:
        y = y.astype(x.dtype)
    ctx.set_output("Out", y)


# -- twin ------------------------------------------------------------------------------------
def square(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x * x)


def square_grad(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), 2 * x * dout)


_KERNELS = {
    "lp_row_sum": (row_sum, row_sum_grad, row_sum_in_storage_dtype),
    "lp_row_norm": (row_norm, row_norm_grad, row_norm_squares_in_storage_dtype),
    "lp_scale": (scale, scale_grad, scale_truncating),
}
for _name, (_fwd, _bwd, _bad) in _KERNELS.items():
    for _kind in ("broken", "good"):
        _t = f"{_kind}_{_name}"
        register_kernel(_t, dtypes=FLOATS)(_fwd)
        register_kernel(_t + "_grad", dtypes=FLOATS)(_bwd)
        register_kernel(_t, dtypes=LOW)(_bad if _kind == "broken" else compute_in_float32(_fwd))
        register_kernel(_t + "_grad", dtypes=LOW)(compute_in_float32(_bwd))

for _kind in ("broken", "good"):
    _t = f"{_kind}_lp_twin"
    register_kernel(_t, dtypes=FLOATS)(square)
    register_kernel(_t, dtypes=LOW)(compute_in_float32(square))
    register_kernel(_t + "_grad", dtypes=FLOATS)(square_grad)
    register_kernel(_t + "_grad", dtypes=("float16",) if _kind == "broken" else LOW)(  # BUG
        compute_in_float32(square_grad))


# -- halve -----------------------------------------------------------------------------------
def halve(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", (x / 2).astype(x.dtype))


def halve_grad(ctx):
    dout = ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), (dout / 2).astype(dout.dtype))


def halve_doubling_first(ctx):
    x = ctx.input("X")
    with np.errstate(over="ignore"):
        ctx.set_output("Out", ((x * 2) / 4).astype(x.dtype))   # BUG: 2 X is inf near the top


for _kind in ("broken", "good"):
    _t = f"{_kind}_lp_halve"
    register_operator(_t, _op(False), _Maker, grad_maker=_grad_maker(_t + "_grad"))
    register_operator(_t + "_grad", _GradOp)
    register_kernel(_t, dtypes=FLOATS)(halve)
    register_kernel(_t, dtypes=LOW)(halve_doubling_first if _kind == "broken" else halve)
    register_kernel(_t + "_grad", dtypes=FLOATS + LOW)(halve_grad)
