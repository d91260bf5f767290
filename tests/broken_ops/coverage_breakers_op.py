"""Broken ops for the bug classes the red team found uncovered, each with a correct twin
(`broken_*` / `good_*`):

| broken op | bug | fails |
| --- | --- | --- |
| broken_onegrad_mul | grad kernel's path for "only dX wanted" multiplies by X instead of Y | grad (no_grad_set subsets) |
| broken_f64in32_tanh | float64 grad kernel computes in float32 (`out.astype(np.float32)`) | precision (float64 resolution) |
| broken_negaxis_softmax | any negative `axis` taken as the last one | attrs (other attr values) |
| broken_bias_scale | ignores `bias_after_scale=False` | attrs (other attr values) |
| broken_int_relu | int kernels `np.maximum(x, 0.0)`: int in, float64 out | dtypes (integer kernels) |
| broken_squeeze_sum | `np.squeeze` drops a batch of 1 | fuzz (edge shapes: a batch of 1) |
| broken_bcast_add | dY not summed over Y's own size-1 dims | fuzz (edge shapes: a size-1 broadcast dim) |
"""
import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, enforce, grad_var_name,
                   register_kernel, register_operator)

DX, DY, DOUT = grad_var_name("X"), grad_var_name("Y"), grad_var_name("Out")


class _Same(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class _SameGrad(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(DX, ctx.get_input_dim(DOUT))


def _maker(attrs=(), with_y=False):
    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) input.")
            if with_y:
                self.add_input("Y", "(Tensor) input of X's shape.")
            self.add_output("Out", "(Tensor) output.")
            for name, kind, default, doc in attrs:
                self.add_attr(name, kind, doc, default)
            self.add_comment("A deliberately broken op (or its correct twin).")
    return Maker


def _grad_maker(grad_type, fwd_in="X", with_y=False):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            if fwd_in == "Out":
                op.set_input("Out", self.output("Out"))
            else:
                op.set_input("X", self.input("X"))
            if with_y:
                op.set_input("Y", self.input("Y"))
            op.set_input(DOUT, self.output_grad("Out"))
            op.set_output(DX, self.input_grad("X"))
            if with_y:
                op.set_output(DY, self.input_grad("Y"))
            return [op]
    return Maker


def _pair(name, fwd, grad=None, attrs=(), with_y=False, fwd_in="X", op_cls=_Same,
          dtypes=("float32", "float64")):
    for kind in ("broken", "good"):
        t = f"{kind}_{name}"
        gm = _grad_maker(t + "_grad", fwd_in, with_y) if grad else None
        register_operator(t, op_cls, _maker(attrs, with_y), grad_maker=gm)
        register_kernel(t, dtypes=dtypes)(fwd(kind == "broken"))
        if grad:
            register_operator(t + "_grad", _XYGrad if with_y else _SameGrad)
            register_kernel(t + "_grad")(grad(kind == "broken"))


# -- grad: the single-gradient path -----------------------------------------------------------
class _XY(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class _XYGrad(OperatorWithKernel):
    def infer_shape(self, ctx):
        if ctx.has_output(DX):
            ctx.set_output_dim(DX, ctx.get_input_dim("X"))
        if ctx.has_output(DY):
            ctx.set_output_dim(DY, ctx.get_input_dim("Y"))


def _mul(broken):
    def kernel(ctx):
        ctx.set_output("Out", ctx.input("X") * ctx.input("Y"))
    return kernel


def _mul_grad(broken):
    def kernel(ctx):
        x, y, d = ctx.input("X"), ctx.input("Y"), ctx.input(DOUT)
        if ctx.has_output(DX) and ctx.has_output(DY):
            ctx.set_output(DX, d * y)
            ctx.set_output(DY, d * x)
        elif ctx.has_output(DX):
            ctx.set_output(DX, d * (x if broken else y))     # BUG: only-dX path uses X
        elif ctx.has_output(DY):
            ctx.set_output(DY, d * x)
    return kernel


_pair("onegrad_mul", _mul, _mul_grad, with_y=True, op_cls=_XY)


# -- precision: float64 computed in float32 ---------------------------------------------------
def _tanh(broken):
    def kernel(ctx):
        ctx.set_output("Out", np.tanh(ctx.input("X")))
    return kernel


def _tanh_grad(broken):
    def kernel(ctx):
        out, d = ctx.input("Out"), ctx.input(DOUT)
        if broken:
            out = out.astype(np.float32)                     # BUG: float64 rounded to float32
        ctx.set_output(DX, (d * (1 - out * out)).astype(d.dtype))
    return kernel


_pair("f64in32_tanh", _tanh, _tanh_grad, fwd_in="Out")


# -- attrs: other attr values -------------------------------------------------------------------
class _Softmax(_Same):
    def infer_shape(self, ctx):
        rank = len(ctx.get_input_dim("X"))
        axis = ctx.attr("axis")
        enforce(-rank <= axis < rank, "axis %s out of range for rank %s", axis, rank)
        super().infer_shape(ctx)


def _axis(ctx, ndim, broken):
    a = int(ctx.attr("axis"))
    if broken:
        return a if a >= 0 else ndim - 1                     # BUG: any negative axis = last
    return a % ndim


def _softmax(broken):
    def kernel(ctx):
        x = ctx.input("X")
        a = _axis(ctx, x.ndim, broken)
        e = np.exp(x - x.max(axis=a, keepdims=True))
        ctx.set_output("Out", e / e.sum(axis=a, keepdims=True))
    return kernel


def _softmax_grad(broken):
    def kernel(ctx):
        out, d = ctx.input("Out"), ctx.input(DOUT)
        a = _axis(ctx, out.ndim, broken)
        ctx.set_output(DX, out * (d - (d * out).sum(axis=a, keepdims=True)))
    return kernel


_pair("negaxis_softmax", _softmax, _softmax_grad, fwd_in="Out", op_cls=_Softmax,
      attrs=[("axis", "int", -1, "the axis to normalize over")])


def _scale(broken):
    def kernel(ctx):
        x = ctx.input("X")
        s, b = x.dtype.type(ctx.attr("scale")), x.dtype.type(ctx.attr("bias"))
        if ctx.attr("bias_after_scale") or broken:           # BUG: the attr is ignored
            ctx.set_output("Out", x * s + b)
        else:
            ctx.set_output("Out", (x + b) * s)
    return kernel


def _scale_grad(broken):
    def kernel(ctx):
        d = ctx.input(DOUT)
        ctx.set_output(DX, d * d.dtype.type(ctx.attr("scale")))
    return kernel


_pair("bias_scale", _scale, _scale_grad,
      attrs=[("scale", "float", 1.0, "the factor"), ("bias", "float", 0.0, "the bias"),
             ("bias_after_scale", "bool", True, "add the bias after scaling")])


# -- dtypes: integer kernels ------------------------------------------------------------------
def _relu(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:
            ctx.set_output("Out", np.maximum(x, 0.0))          # BUG: int in, float64 out
        else:
            ctx.set_output("Out", np.maximum(x, x.dtype.type(0)))
    return kernel


def _relu_grad(broken):
    def kernel(ctx):
        x, d = ctx.input("X"), ctx.input(DOUT)
        ctx.set_output(DX, d * (x > 0))
    return kernel


_pair("int_relu", _relu, _relu_grad, dtypes=("float32", "float64", "int32", "int64"))


# -- fuzz: edge shapes cut out of the OpTest's inputs ------------------------------------------
class _RowSum(OperatorWithKernel):
    def infer_shape(self, ctx):
        dims = list(ctx.get_input_dim("X"))
        ctx.set_output_dim("Out", dims[:1] + dims[2:])


class _RowSumGrad(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(DX, ctx.get_input_dim("X"))


def _rowsum(broken):
    def kernel(ctx):
        x = ctx.input("X")
        s = x.sum(axis=1, keepdims=True)
        # BUG: squeeze also drops a batch of 1
        ctx.set_output("Out", np.squeeze(s) if broken else np.squeeze(s, axis=1))
    return kernel


def _rowsum_grad(broken):
    def kernel(ctx):
        x, d = ctx.input("X"), ctx.input(DOUT)
        ctx.set_output(DX, np.repeat(np.expand_dims(d, 1), x.shape[1], axis=1))
    return kernel


for _kind in ("broken", "good"):
    _t = f"{_kind}_squeeze_sum"
    register_operator(_t, _RowSum, _maker(), grad_maker=_grad_maker(_t + "_grad"))
    register_operator(_t + "_grad", _RowSumGrad)
    register_kernel(_t)(_rowsum(_kind == "broken"))
    register_kernel(_t + "_grad")(_rowsum_grad(_kind == "broken"))


class _Bcast(OperatorWithKernel):
    def infer_shape(self, ctx):
        # numpy's broadcast of X and Y (right-aligned; 1 broadcasts, also against 0; -1
        # unknown). Out = X's dims alone is wrong where Y broadcasts X up (a zero-size Y)
        x, y = list(ctx.get_input_dim("X")), list(ctx.get_input_dim("Y"))
        n = max(len(x), len(y))
        x, y = [1] * (n - len(x)) + x, [1] * (n - len(y)) + y
        ctx.set_output_dim("Out", [b if a == 1 else a if b == 1 else (a if a >= 0 else b)
                                   for a, b in zip(x, y)])


def _bcast_add(broken):
    def kernel(ctx):
        ctx.set_output("Out", ctx.input("X") + ctx.input("Y"))
    return kernel


def _bcast_add_grad(broken):
    def kernel(ctx):
        x, y, d = ctx.input("X"), ctx.input("Y"), ctx.input(DOUT)
        if ctx.has_output(DX):   # X may be broadcast up too (a zero-size Y): sum back
            lead = d.ndim - x.ndim
            dx = d.sum(axis=tuple(range(lead))) if lead else d
            dx = dx.sum(axis=tuple(i for i, n in enumerate(x.shape)
                                   if n == 1 and dx.shape[i] != 1), keepdims=True)
            ctx.set_output(DX, np.ascontiguousarray(dx.reshape(x.shape)))
        if ctx.has_output(DY):
            lead = d.ndim - y.ndim
            dy = d.sum(axis=tuple(range(lead))) if lead else d
            if broken:   # BUG: Y's own size-1 dims are sliced, not summed
                dy = dy[tuple(slice(0, 1) if n == 1 else slice(None) for n in y.shape)]
            else:
                dy = dy.sum(axis=tuple(i for i, n in enumerate(y.shape) if n == 1),
                            keepdims=True)
            ctx.set_output(DY, np.ascontiguousarray(dy.reshape(y.shape)))
    return kernel


for _kind in ("broken", "good"):
    _t = f"{_kind}_bcast_add"
    register_operator(_t, _Bcast, _maker(with_y=True),
                      grad_maker=_grad_maker(_t + "_grad", with_y=True))
    register_operator(_t + "_grad", _XYGrad)
    register_kernel(_t)(_bcast_add(_kind == "broken"))
    register_kernel(_t + "_grad")(_bcast_add_grad(_kind == "broken"))
