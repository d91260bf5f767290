"""Broken ops for the state, process and precision checks, each with a correct twin:

| broken op | bug | fails |
| --- | --- | --- |
| broken_buffer_cache | keeps its output buffer in a module dict keyed by shape | ownership |
| broken_attr_sort | `ctx.attr("axes").sort()` in the kernel | attrs |
| broken_scale_cache | caches attr `factor` in a module dict keyed by X's shape | state |
| broken_f16_tanh | float32 grad kernel computes in float16 | precision |
"""
import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class _Same(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class _SameGrad(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))


def _maker(attrs=()):
    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) input.")
            self.add_output("Out", "(Tensor) output.")
            for name, kind, default, doc in attrs:
                self.add_attr(name, kind, doc, default)
            self.add_comment("A deliberately broken op (or its correct twin).")
    return Maker


def _grad_maker(grad_type, with_x=True):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            if with_x:
                op.set_input("X", self.input("X"))
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            return [op]
    return Maker


# -- ownership: an output buffer kept between calls -------------------------------------------
_BUFFERS = {}


def buffer_cache_kernel(ctx):
    x = ctx.input("X")
    out = _BUFFERS.setdefault((x.shape, x.dtype.str), np.empty_like(x))   # BUG: shared buffer
    np.multiply(x, 2.0, out=out)
    ctx.set_output("Out", out)


def double_kernel(ctx):
    ctx.set_output("Out", ctx.input("X") * 2.0)


def double_grad_kernel(ctx):
    ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")) * 2.0)


for _t, _k in (("broken_buffer_cache", buffer_cache_kernel), ("good_buffer_cache", double_kernel)):
    register_operator(_t, _Same, _maker(), grad_maker=_grad_maker(_t + "_grad"))
    register_operator(_t + "_grad", _SameGrad)
    register_kernel(_t)(_k)
    register_kernel(_t + "_grad")(double_grad_kernel)


# -- attrs: a kernel that sorts its attribute list in place ----------------------------------
class _Reduce(OperatorWithKernel):
    def infer_shape(self, ctx):
        dims = list(ctx.get_input_dim("X"))
        axes = {a % len(dims) for a in self.attr("axes")}
        ctx.set_output_dim("Out", [d for i, d in enumerate(dims) if i not in axes] or [1])


def _axes(ctx, broken):
    axes = ctx.attr("axes")
    if broken:
        axes.sort()                                                       # BUG: edits the attr
        return tuple(axes)
    return tuple(sorted(axes))


def _reduce_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        out = x.sum(axis=_axes(ctx, broken))
        ctx.set_output("Out", out.reshape(out.shape or (1,)))
    return kernel


def _reduce_grad_kernel(broken):
    def kernel(ctx):
        x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
        axes = _axes(ctx, broken)
        shape = [1 if i in {a % x.ndim for a in axes} else d for i, d in enumerate(x.shape)]
        ctx.set_output(grad_var_name("X"), np.broadcast_to(dout.reshape(shape), x.shape).copy())
    return kernel


for _t, _b in (("broken_attr_sort", True), ("good_attr_sort", False)):
    register_operator(_t, _Reduce, _maker([("axes", "ints", [0], "axes to sum over")]),
                      grad_maker=_grad_maker(_t + "_grad"))
    register_operator(_t + "_grad", _SameGrad)
    register_kernel(_t)(_reduce_kernel(_b))
    register_kernel(_t + "_grad")(_reduce_grad_kernel(_b))


# -- state: a cache keyed too narrowly ------------------------------------------------------
_FACTORS = {}


def _factor(ctx, broken):
    if broken:
        return _FACTORS.setdefault(ctx.input("X").shape, ctx.attr("factor"))  # BUG: key
    return ctx.attr("factor")


def _scale_kernel(broken):
    def kernel(ctx):
        ctx.set_output("Out", ctx.input("X") * _factor(ctx, broken))
    return kernel


def _scale_grad_kernel(broken):
    def kernel(ctx):
        ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")) * _factor(ctx, broken))
    return kernel


for _t, _b in (("broken_scale_cache", True), ("good_scale_cache", False)):
    register_operator(_t, _Same, _maker([("factor", "float", 1.0, "the factor")]),
                      grad_maker=_grad_maker(_t + "_grad"))
    register_operator(_t + "_grad", _SameGrad)
    register_kernel(_t)(_scale_kernel(_b))
    register_kernel(_t + "_grad")(_scale_grad_kernel(_b))


# -- precision: float32 grad kernel in float16 ---------------------------------------------
def tanh_kernel(ctx):
    ctx.set_output("Out", np.tanh(ctx.input("X")))


def _tanh_grad_kernel(broken):
    def kernel(ctx):
        x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
        if broken and x.dtype == np.float32:
            x, dout = x.astype(np.float16), dout.astype(np.float16)       # BUG: float16 math
        t = np.tanh(x)
        g = dout * (1 - t * t)
        ctx.set_output(grad_var_name("X"), g.astype(ctx.input("X").dtype))
    return kernel


for _t, _b in (("broken_f16_tanh", True), ("good_f16_tanh", False)):
    register_operator(_t, _Same, _maker(), grad_maker=_grad_maker(_t + "_grad"))
    register_operator(_t + "_grad", _SameGrad)
    register_kernel(_t)(tanh_kernel)
    register_kernel(_t + "_grad")(_tanh_grad_kernel(_b))
