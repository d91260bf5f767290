"""A fresh set of tracker-modelled bugs (issue 36), each a broken op (`broken_*`) with a
correct twin (`good_*`). Every one was chosen so that none of the checks that existed before
issue 36 targets its class; the author's own OpTest (tracker_optests.py) passes the broken op.

| broken op | bug | modelled on | law |
| --- | --- | --- | --- |
| broken_argmax_dtype | infer_shape never declares Out int64: a program sees float32 | pytorch/pytorch#137747 (fake/real dtype mismatches), pytorch/TensorRT#4624 | 1 |
| broken_isfinite_dtype | infer_shape leaves a bool output at X's dtype | pytorch/pytorch#138399 (meta dtype not the real one) | 1 |
| broken_cast_dtype | infer_shape declares every out_dtype but bool: a bool Out is float32 to the program (the test casts to int64) | pytorch/pytorch#138399, PaddlePaddle/Paddle#21604 (compile-time descriptions) | 1 (derived attr) |
| broken_keepdim_sum | compile-time infer_shape ignores keep_dim (the run-time branch honours it); the test keeps keep_dim False | pytorch/pytorch#179302 (meta shape != kernel shape) | 1 (derived attr) |
| broken_bias_grad | dBias is the mean of dOut, not its sum; the test checks X's gradient only | PaddlePaddle/Paddle#3797 (test every input's gradient) | 3 |
| broken_nograd_scale | Out = X * Scale; the grad maker gives Scale no gradient, yet Scale moves Out | tensorflow/tensorflow#7397 (analytic != numeric gradient of an input) | 3 |
| broken_pool_mask | without the dispensable Mask output the kernel takes a "fast path" that is wrong | pytorch/pytorch#8892 (max_pool ignoring return_indices) | 3 (dispensable) |
| broken_reduce_mode | `reduction` other than "sum" silently means "mean" ("max" too) | arogozhnikov/einops#31 (unknown reduction) | 5 |
| broken_pad_mode | `mode` other than "reflect" silently means "constant" ("edge" too) | pytorch/pytorch#184064 family: F.pad modes | 5 |
| broken_fill_int64 | int64 fill value goes through float: 2^53+1 becomes 2^53 | pytorch/pytorch#184064 (F.pad int64 value precision) | 5 |
| broken_range_int64 | int64 range start + step * i computed in float64 | numpy/numpy#9006, xarray-contrib/xarray-spatial#3056 | 5 |
| broken_square_pool | 2x2 avg pool uses H for the W loop too (the test's H == W) | mkocabas/CoordConv-pytorch#2, dmlc/minerva#43 (non-square inputs) | 2 (equal dims) |
| broken_flatten_dims | infer_shape multiplies dims[1] by itself (the test's dims 1, 2 equal) | pytorch/pytorch#179302 | 2 (equal dims) |
| broken_scatter_add | `out[ids] += upd`: duplicate ids keep one update (the test's ids are unique) | pytorch/pytorch#146299, cvxgrp/DNLP#112 | 2 (unique indices) |
| broken_embedding_grad | `dW[ids] = dOut`: duplicate ids keep one gradient row | tensorflow/tensorflow#7397, pytorch/pytorch#57101 | 2 (unique indices) |
| broken_segment_sum | segment sums by runs of equal ids: unsorted ids split a segment | Oneflow-Inc/oneflow#2200 (unsorted segment sum) | 2 (sorted indices) |
| broken_softlabel_ce | soft-label CE grad `softmax - label`: right only when label rows sum to 1 | tensorflow/tensorflow#21271, PaddlePaddle/Paddle#63678 | 2 (rows sum to 1) |
| broken_blocked_cumsum | cumsum in blocks of 1024 with no carry between blocks | pytorch/pytorch#143486, PaddlePaddle/Paddle#43722, #48093 | 2 (block size) |
| broken_chunked_softmax | softmax normalized per block of 1024 along the axis | pytorch/pytorch#143486, PaddlePaddle/Paddle#43722 (block-size switches) | 2 (block size) |
| broken_perm_sum | sums in a fixed random order drawn after `np.random.seed(0)`: the user's global stream reset | Qiskit/qiskit#2850, anyoptimization/pymoo#413 | 4 |
| broken_seterr_log | `np.seterr(divide="ignore")` left set after the kernel | pandas-dev/pandas#13109, emsig/empymod#130 | 4 |
| broken_warn_filter | `warnings.simplefilter("ignore")` left set after the kernel | econ-ark/HARK#247 | 4 |
| broken_env_gram | sets `MKL_NUM_THREADS=1` in os.environ for good | pandas-dev/pandas#13109 family (a library changing process state) | 4 |
| broken_leak_cache | keeps every input it saw in a module list: memory grows per call | PaddlePaddle/PaddleOCR#11639, PaddlePaddle/Paddle#10373 | 4 |
"""
import os
import warnings

import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, enforce, grad_var_name,
                   register_kernel, register_operator)

GX, GOUT = grad_var_name("X"), grad_var_name("Out")
KINDS = ("broken", "good")


def _maker(inputs=("X",), outputs=("Out",), attrs=(), dispensable=(), checks=None,
           no_grad=()):
    class Maker(OpMaker):
        def make(self):
            for name in inputs:
                v = self.add_input(name, f"(Tensor) {name}.")
                if name in no_grad:
                    v.no_gradient("a target: the loss is not differentiated w.r.t. it")
            for name in outputs:
                v = self.add_output(name, f"(Tensor) {name}.")
                if name in dispensable:
                    v.as_dispensable()
            for name, kind, default in attrs:
                a = self.add_attr(name, kind, f"attr {name}", default)
                if checks and name in checks:
                    a.in_set(checks[name])
            self.add_comment("A deliberately broken op (or its correct twin).")
    return Maker


def _op(infer):
    return type("Op", (OperatorWithKernel,), {"infer_shape": lambda self, ctx: infer(ctx)})


def _grad_maker(grad_type, fwd=("X",), grads=("X",), outs=()):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            for slot in fwd:
                op.set_input(slot, self.input(slot))
            for slot in outs:
                op.set_input(slot, self.output(slot))
            op.set_input(GOUT, self.output_grad("Out"))
            for slot in grads:
                op.set_output(grad_var_name(slot), self.input_grad(slot))
            return [op]
    return Maker


def _grad_op(grads=("X",)):
    def infer(ctx):
        for slot in grads:
            ctx.set_output_dim(grad_var_name(slot), ctx.get_input_dim(slot))
    return _op(infer)


def _pair(name, maker, infer, kernel, dtypes=("float32", "float64"), grad=None,
          grad_fwd=("X",), grads=("X",), grad_outs=(), good_maker=None):
    """broken_<name> and good_<name>. `infer(broken)` / `kernel(broken)` / `grad(broken)`
    give the op's infer_shape, kernel and grad kernel for each kind."""
    for kind in KINDS:
        t, broken = f"{kind}_{name}", kind == "broken"
        m = good_maker if (good_maker is not None and not broken) else maker
        if grad is None:
            register_operator(t, _op(infer(broken)), m)
        else:
            register_operator(t, _op(infer(broken)), m,
                              grad_maker=_grad_maker(t + "_grad", grad_fwd, grads, grad_outs))
            register_operator(t + "_grad", _grad_op(grads))
            register_kernel(t + "_grad", dtypes=dtypes)(grad(broken))
        register_kernel(t, dtypes=dtypes)(kernel(broken))


def _reduce_to(g, shape):
    """g summed down to `shape` (numpy broadcasting's size-1 and missing leading dims)."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


def _same(broken=False):
    def infer(ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")
    return infer


def _unary_grad(fn):
    """Grad kernel builder dX = dOut * fn(x)."""
    def make(broken):
        def kernel(ctx):
            ctx.set_output(GX, ctx.input(GOUT) * fn(ctx.input("X")))
        return kernel
    return make


# == law 1: what the program is told equals what the kernel does ===========================
def _axis_dropped(ctx):
    dims = list(ctx.get_input_dim("X"))
    a = ctx.attr("axis")
    enforce(-len(dims) <= a < len(dims), "axis %s out of range for rank %s", a, len(dims))
    return [d for i, d in enumerate(dims) if i != a % len(dims)]


def _argmax_infer(broken):
    def infer(ctx):
        ctx.set_output_dim("Out", _axis_dropped(ctx))
        if not broken:
            ctx.set_output_dtype("Out", "int64")
        # BUG (broken): no set_output_dtype: the program's Out inherits X's float dtype
    return infer


def _argmax_kernel(broken):
    def kernel(ctx):
        ctx.set_output("Out", np.argmax(ctx.input("X"), axis=ctx.attr("axis")).astype(np.int64))
    return kernel


_pair("argmax_dtype", _maker(attrs=[("axis", "int", -1)]), _argmax_infer, _argmax_kernel)


def _isfinite_infer(broken):
    def infer(ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        if not broken:
            ctx.set_output_dtype("Out", "bool")
    return infer


def _isfinite_kernel(broken):
    def kernel(ctx):
        ctx.set_output("Out", np.isfinite(ctx.input("X")))
    return kernel


_pair("isfinite_dtype", _maker(), _isfinite_infer, _isfinite_kernel)


def _cast_infer(broken):
    def infer(ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        t = ctx.attr("out_dtype")
        if not (broken and t == "bool"):   # BUG (broken): bool forgotten, Out stays X's float
            ctx.set_output_dtype("Out", t)
    return infer


def _cast_kernel(broken):
    def kernel(ctx):
        ctx.set_output("Out", ctx.input("X").astype(ctx.attr("out_dtype")))
    return kernel


_pair("cast_dtype", _maker(attrs=[("out_dtype", "string", "float64")],
                           checks={"out_dtype": ["float64", "int64", "bool"]}),
      _cast_infer, _cast_kernel)


def _keepdim_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        if not dims:          # a 0-D input: dim 0 / -1 reduce nothing (numpy and torch alike)
            ctx.set_output_dim("Out", [])
            return
        a = ctx.attr("dim") % len(dims)
        keep = ctx.attr("keep_dim")
        if broken and not ctx.is_runtime():
            keep = False      # BUG: the compile-time branch forgot keep_dim
        out = [(1 if i == a else d) for i, d in enumerate(dims)] if keep else \
            [d for i, d in enumerate(dims) if i != a]
        ctx.set_output_dim("Out", out)
    return infer


def _keepdim_kernel(broken):
    def kernel(ctx):
        ctx.set_output("Out", np.sum(ctx.input("X"), axis=ctx.attr("dim"),
                                     keepdims=ctx.attr("keep_dim")))
    return kernel


_pair("keepdim_sum", _maker(attrs=[("dim", "int", -1), ("keep_dim", "bool", False)]),
      _keepdim_infer, _keepdim_kernel)


# == law 3: every input behaves as declared under differentiation ============================
def _bias_infer(broken):
    def infer(ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
    return infer


def _bias_kernel(broken):
    def kernel(ctx):
        ctx.set_output("Out", ctx.input("X") * 2.0 + ctx.input("Bias"))
    return kernel


def _bias_grad(broken):
    def kernel(ctx):
        d = ctx.input(GOUT)
        ctx.set_output(GX, d * 2.0)
        # BUG (broken): the mean over the batch, not the sum
        g = d.mean(axis=0) if broken else d.sum(axis=0)
        ctx.set_output(grad_var_name("Bias"), _reduce_to(g, ctx.input("Bias").shape))
    return kernel


_pair("bias_grad", _maker(inputs=("X", "Bias")), _bias_infer, _bias_kernel, grad=_bias_grad,
      grad_fwd=("X", "Bias"), grads=("X", "Bias"))


def _scale_kernel(broken):
    def kernel(ctx):
        ctx.set_output("Out", ctx.input("X") * ctx.input("Scale"))
    return kernel


def _scale_grad(broken):
    def kernel(ctx):
        d, x, s = ctx.input(GOUT), ctx.input("X"), ctx.input("Scale")
        ctx.set_output(GX, d * s)
        if not broken:
            ctx.set_output(grad_var_name("Scale"), np.sum(d * x).reshape(s.shape))
    return kernel


def _scale_infer(ctx):
    enforce(list(ctx.get_input_dim("Scale")) in ([1], [-1]), "Scale must have shape [1]")
    ctx.set_output_dim("Out", ctx.get_input_dim("X"))


for _kind in KINDS:   # broken: the grad maker declares no gradient for Scale
    _t = f"{_kind}_nograd_scale"
    _g = ("X",) if _kind == "broken" else ("X", "Scale")
    register_operator(_t, _op(_scale_infer), _maker(inputs=("X", "Scale")),
                      grad_maker=_grad_maker(_t + "_grad", ("X", "Scale"), _g))
    register_operator(_t + "_grad", _grad_op(_g))
    register_kernel(_t + "_grad")(_scale_grad(_kind == "broken"))
    register_kernel(_t)(_scale_kernel(_kind == "broken"))


def _pool_infer(broken):
    def infer(ctx):
        n, w = ctx.get_input_dim("X")
        ctx.set_output_dim("Out", [n, w // 2])
        if ctx.has_output("Mask"):
            ctx.set_output_dim("Mask", [n, w // 2])
            ctx.set_output_dtype("Mask", "int64")
    return infer


def _pool_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        n, w = x.shape
        win = x[:, : w // 2 * 2].reshape(n, w // 2, 2)
        if ctx.has_output("Mask"):
            ctx.set_output("Mask", np.argmax(win, axis=2).astype(np.int64))
            ctx.set_output("Out", win.max(axis=2))
        elif broken:   # BUG: the "no indices" fast path takes the first of each window
            ctx.set_output("Out", np.ascontiguousarray(win[:, :, 0]))
        else:
            ctx.set_output("Out", win.max(axis=2))
    return kernel


_pair("pool_mask", _maker(outputs=("Out", "Mask"), dispensable=("Mask",)), _pool_infer,
      _pool_kernel)


# == law 5: refusals and exactness ==========================================================
def _rows_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) >= 1, "X must have a dimension")
        ctx.set_output_dim("Out", dims[:-1])
    return infer


def _reduce_kernel(broken):
    def kernel(ctx):
        x, r = ctx.input("X"), ctx.attr("reduction")
        if r == "sum":
            ctx.set_output("Out", x.sum(axis=-1))
        elif broken or r == "mean":      # BUG (broken): every other value is "mean"
            ctx.set_output("Out", x.mean(axis=-1))
    return kernel


_pair("reduce_mode", _maker(attrs=[("reduction", "string", "mean")]), _rows_infer,
      _reduce_kernel, good_maker=_maker(attrs=[("reduction", "string", "mean")],
                                        checks={"reduction": ["sum", "mean"]}))


def _pad_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        dims[-1] = dims[-1] + 2 if dims[-1] >= 0 else -1
        ctx.set_output_dim("Out", dims)
    return infer


def _pad_kernel(broken):
    def kernel(ctx):
        x, mode = ctx.input("X"), ctx.attr("mode")
        width = [(0, 0)] * (x.ndim - 1) + [(1, 1)]
        if mode == "reflect":
            ctx.set_output("Out", np.pad(x, width, mode="reflect"))
        elif broken or mode == "constant":   # BUG (broken): "edge" etc. silently constant
            ctx.set_output("Out", np.pad(x, width, mode="constant"))
        else:
            enforce(False, "pad mode %s is not supported", mode)
    return kernel


_pair("pad_mode", _maker(attrs=[("mode", "string", "constant")]), _pad_infer, _pad_kernel)


def _fill_infer(broken):
    def infer(ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.set_output_dtype("Out", "int64")
    return infer


def _fill_kernel(broken):
    def kernel(ctx):
        v = ctx.attr("value")
        if broken:   # BUG: the value goes through a float
            ctx.set_output("Out", np.full(ctx.input("X").shape, float(v)).astype(np.int64))
        else:
            ctx.set_output("Out", np.full(ctx.input("X").shape, v, dtype=np.int64))
    return kernel


_pair("fill_int64", _maker(attrs=[("value", "long", 0)]), _fill_infer, _fill_kernel)


def _range_kernel(broken):
    def kernel(ctx):
        n = ctx.input("X").shape[-1]
        start, step = ctx.attr("start"), ctx.attr("step")
        if broken:   # BUG: computed in float64
            ctx.set_output("Out", (float(start) + float(step) * np.arange(n)).astype(np.int64))
        else:
            ctx.set_output("Out", start + step * np.arange(n, dtype=np.int64))
    return kernel


def _range_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) >= 1, "X must have a dimension")
        ctx.set_output_dim("Out", dims[-1:])
        ctx.set_output_dtype("Out", "int64")
    return infer


_pair("range_int64", _maker(attrs=[("start", "long", 0), ("step", "long", 1)]), _range_infer,
      _range_kernel)


# == law 2: break the author's coincidences ===================================================
def _pool2_infer(broken):
    def infer(ctx):
        n, c, h, w = ctx.get_input_dim("X")
        ctx.set_output_dim("Out", [n, c, h // 2 if h >= 0 else -1, w // 2 if w >= 0 else -1])
    return infer


def _pool2_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        n, c, h, w = x.shape
        w_used = h if broken else w       # BUG: the W loop bound taken from H
        out = np.zeros((n, c, h // 2, w // 2), x.dtype)
        for i in range(h // 2):
            for j in range(min(w_used, w) // 2):
                out[:, :, i, j] = x[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].mean(axis=(2, 3))
        ctx.set_output("Out", out)
    return kernel


def _pool2_grad(broken):
    def kernel(ctx):
        x, d = ctx.input("X"), ctx.input(GOUT)
        g = np.zeros_like(x)
        h2, w2 = d.shape[2], d.shape[3]
        g[:, :, :h2 * 2, :w2 * 2] = np.repeat(np.repeat(d, 2, axis=2), 2, axis=3) / 4.0
        ctx.set_output(GX, g)
    return kernel


_pair("square_pool", _maker(), _pool2_infer, _pool2_kernel, grad=_pool2_grad)


def _flatten_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) == 3, "X must be 3-D")
        inner = dims[1] * (dims[1] if broken else dims[2])   # BUG: dims[1] twice
        ctx.set_output_dim("Out", [dims[0], inner if dims[1] >= 0 and dims[2] >= 0 else -1])
    return infer


def _flatten_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", x.reshape(x.shape[0], int(np.prod(x.shape[1:]))).copy())
    return kernel


def _flatten_grad(broken):
    def kernel(ctx):
        ctx.set_output(GX, ctx.input(GOUT).reshape(ctx.input("X").shape).copy())
    return kernel


_pair("flatten_dims", _maker(), _flatten_infer, _flatten_kernel, grad=_flatten_grad)


def _check_ids(ids, n):
    enforce(ids.size == 0 or (ids.min() >= 0 and ids.max() < n),
            "ids must lie in [0, %s), got [%s, %s]", n, ids.min() if ids.size else 0,
            ids.max() if ids.size else 0)


def _scatter_kernel(broken):
    def kernel(ctx):
        out = ctx.input("X").copy()
        ids, upd = ctx.input("Ids"), ctx.input("Updates")
        _check_ids(ids, out.shape[0])
        if broken:
            out[ids] += upd                   # BUG: a duplicate id keeps one update
        else:
            np.add.at(out, ids, upd)
        ctx.set_output("Out", out)
    return kernel


def _scatter_grad(broken):
    def kernel(ctx):
        d = ctx.input(GOUT)
        ctx.set_output(GX, d.copy())
        ctx.set_output(grad_var_name("Updates"), d[ctx.input("Ids")])
    return kernel


_pair("scatter_add", _maker(inputs=("X", "Ids", "Updates")), _bias_infer, _scatter_kernel,
      grad=_scatter_grad, grad_fwd=("X", "Ids", "Updates"), grads=("X", "Updates"))


def _emb_infer(broken):
    def infer(ctx):
        (n,), (v, d) = ctx.get_input_dim("Ids"), ctx.get_input_dim("W")
        ctx.set_output_dim("Out", [n, d])
    return infer


def _emb_kernel(broken):
    def kernel(ctx):
        _check_ids(ctx.input("Ids"), ctx.input("W").shape[0])
        ctx.set_output("Out", ctx.input("W")[ctx.input("Ids")])
    return kernel


def _emb_grad(broken):
    def kernel(ctx):
        w, ids, d = ctx.input("W"), ctx.input("Ids"), ctx.input(GOUT)
        g = np.zeros_like(w)
        if broken:
            g[ids] = d                          # BUG: duplicate ids overwrite
        else:
            np.add.at(g, ids, d)
        ctx.set_output(grad_var_name("W"), g)
    return kernel


for _kind in KINDS:
    _t = f"{_kind}_embedding_grad"
    register_operator(_t, _op(_emb_infer(False)), _maker(inputs=("W", "Ids")),
                      grad_maker=_grad_maker(_t + "_grad", ("W", "Ids"), ("W",)))
    register_operator(_t + "_grad", _grad_op(("W",)))
    register_kernel(_t + "_grad")(_emb_grad(_kind == "broken"))
    register_kernel(_t)(_emb_kernel(_kind == "broken"))


def _seg_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        ctx.set_output_dim("Out", [ctx.attr("num_segments")] + dims[1:])
    return infer


def _seg_kernel(broken):
    def kernel(ctx):
        x, ids, k = ctx.input("X"), ctx.input("Ids"), ctx.attr("num_segments")
        _check_ids(ids, k)
        out = np.zeros((k,) + x.shape[1:], x.dtype)
        if broken:   # BUG: runs of equal ids, each assigned to its id (sorted ids assumed)
            if ids.size:
                starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
                out[ids[starts]] = np.add.reduceat(x, starts, axis=0)
        else:
            np.add.at(out, ids, x)
        ctx.set_output("Out", out)
    return kernel


_pair("segment_sum", _maker(inputs=("X", "Ids"), attrs=[("num_segments", "int", 1)]),
      _seg_infer, _seg_kernel)


def _ce_infer(broken):
    def infer(ctx):
        n, _ = ctx.get_input_dim("X")
        ctx.set_output_dim("Out", [n, 1])
    return infer


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _ce_kernel(broken):
    def kernel(ctx):
        x, lab = ctx.input("X"), ctx.input("Label")
        m = x.max(axis=1, keepdims=True)
        logp = x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
        ctx.set_output("Out", -(lab * logp).sum(axis=1, keepdims=True))
    return kernel


def _ce_grad(broken):
    def kernel(ctx):
        x, lab, d = ctx.input("X"), ctx.input("Label"), ctx.input(GOUT)
        p = _softmax(x)
        if broken:   # BUG: assumes every label row sums to 1
            g = p - lab
        else:
            g = p * lab.sum(axis=1, keepdims=True) - lab
        ctx.set_output(GX, g * d)
    return kernel


_pair("softlabel_ce", _maker(inputs=("X", "Label"), no_grad=("Label",)), _ce_infer, _ce_kernel, grad=_ce_grad,
      grad_fwd=("X", "Label"))


def _bcumsum_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if not broken:
            ctx.set_output("Out", np.cumsum(x, axis=-1).reshape(x.shape))
            return
        out = np.empty_like(x)
        for s in range(0, x.shape[-1], 1024):   # BUG: no carry from the previous block
            out[..., s:s + 1024] = np.cumsum(x[..., s:s + 1024], axis=-1)
        ctx.set_output("Out", out)
    return kernel


def _bcumsum_grad(broken):
    def kernel(ctx):
        d = ctx.input(GOUT)
        ctx.set_output(GX, np.flip(np.cumsum(np.flip(d, -1), axis=-1), -1))
    return kernel


def _rank1(broken):
    def infer(ctx):
        enforce(len(ctx.get_input_dim("X")) >= 1, "X must have a dimension")
        _same()(ctx)
    return infer


_pair("blocked_cumsum", _maker(), _rank1, _bcumsum_kernel, grad=_bcumsum_grad)


def _chunk_infer(broken):
    def infer(ctx):
        enforce(len(ctx.get_input_dim("X")) >= 1, "X must have a dimension")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
    return infer


def _chunk_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: each block of 1024 along the axis normalized on its own
            out = np.empty_like(x)
            for s in range(0, x.shape[-1], 1024):
                out[..., s:s + 1024] = _softmax_last(x[..., s:s + 1024])
        else:
            out = _softmax_last(x)
        ctx.set_output("Out", out)
    return kernel


def _softmax_last(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


_pair("chunked_softmax", _maker(), _chunk_infer, _chunk_kernel)


# == law 4: the op leaves no trace ===========================================================
def _perm_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: reseeds numpy's global generator for a reproducible order
            np.random.seed(0)
            perm = np.random.permutation(x.shape[-1])
        else:
            perm = np.random.default_rng(0).permutation(x.shape[-1])
        ctx.set_output("Out", x[..., perm].sum(axis=-1))
    return kernel


_pair("perm_sum", _maker(), _rows_infer, _perm_kernel)


def _log_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: the process-wide floating-point error state changed for good
            np.seterr(divide="ignore", invalid="ignore")
            ctx.set_output("Out", np.log(x))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                ctx.set_output("Out", np.log(x))
    return kernel


_pair("seterr_log", _maker(), _same, _log_kernel, grad=_unary_grad(lambda x: 1.0 / x))


def _warn_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: every warning of the process silenced from now on
            warnings.simplefilter("ignore")
            ctx.set_output("Out", np.sqrt(x))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ctx.set_output("Out", np.sqrt(x))
    return kernel


_pair("warn_filter", _maker(), _same, _warn_kernel, grad=_unary_grad(lambda x: 0.5 / np.sqrt(x)))

def _env_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: pins the thread count of every later numpy/BLAS user
            os.environ["MKL_NUM_THREADS"] = "1"
        ctx.set_output("Out", x @ x.T)
    return kernel


def _gram_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) == 2, "X must be 2-D")
        ctx.set_output_dim("Out", [dims[0], dims[0]])
    return infer


_pair("env_gram", _maker(), _gram_infer, _env_kernel)

_SEEN = []   # broken_leak_cache's "debug history"


def _leak_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:   # BUG: every input kept alive
            _SEEN.append(np.array(x, copy=True))
        ctx.set_output("Out", np.tanh(x))
    return kernel


_pair("leak_cache", _maker(), _same, _leak_kernel,
      grad=_unary_grad(lambda x: 1.0 - np.tanh(x) ** 2))
