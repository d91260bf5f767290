"""Broken ops for the laws every op obeys (issue 36), each with a correct twin (`good_*`);
their OpTests (test_law_breakers.py) are the cases an author writes, and pass the broken op
in every check but the law's:

| broken op | bug | fails |
| --- | --- | --- |
| broken_law_argmax | infer_shape never declares Out int64: the program sees float32 | describe |
| broken_law_bias | dBias is the mean of dOut, not the sum (the test checks X's gradient only) | every_grad |
| broken_law_mask | without the dispensable Indices output the kernel keeps each window's first element | every_grad (dispensable) |
| broken_law_mode | `reduction` other than "sum" silently "mean" | refusals |
| broken_law_fill | an int64 fill value through float: 2^53 + 1 becomes 2^53 | refusals (int64 exactness) |
| broken_law_pool | 2x2 average pool bounds its W loop by H (the test's H == W) | coincidences |
| broken_law_perm | reseeds numpy's global generator for its summation order | trace |
| broken_law_cumsum | cumulative sum over rows by re-summing every prefix: O(rows^2) | trace (scaling, `OPKIT_LAWS_DEEP=1` only) |

Modelled on: pytorch/pytorch#137747 (fake/real dtype mismatches), PaddlePaddle/Paddle#3797
(every input's gradient), pytorch/pytorch#8892 (return_indices ignored), pytorch/pytorch#184064
(int64 values through float), mkocabas/CoordConv-pytorch#2 (non-square inputs),
Qiskit/qiskit#2850 (np.random.seed in library code). A larger set: tests/tracker_set/.
"""
import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, enforce, errors, grad_var_name,
                   register_kernel, register_operator)

GX, GB, GOUT = grad_var_name("X"), grad_var_name("Bias"), grad_var_name("Out")


def _maker(inputs=("X",), outputs=("Out",), attrs=(), dispensable=(), in_set=None):
    class Maker(OpMaker):
        def make(self):
            for name in inputs:
                self.add_input(name, f"(Tensor) {name}.")
            for name in outputs:
                v = self.add_output(name, f"(Tensor) {name}.")
                if name in dispensable:
                    v.as_dispensable()
            for name, kind, default in attrs:
                a = self.add_attr(name, kind, f"attr {name}", default)
                if in_set and name in in_set:
                    a.in_set(in_set[name])
            self.add_comment("A deliberately broken op (or its correct twin).")
    return Maker


def _op(infer):
    return type("Op", (OperatorWithKernel,), {"infer_shape": lambda self, ctx: infer(ctx)})


def _both(name, maker, infer, kernel, dtypes=("float32", "float64"), good_maker=None,
          grad=None):
    for kind in ("broken", "good"):
        t, broken = f"{kind}_{name}", kind == "broken"
        m = good_maker if good_maker is not None and not broken else maker
        register_operator(t, _op(infer(broken)), m,
                          grad_maker=grad[0](t + "_grad") if grad else None)
        if grad:
            register_operator(t + "_grad", _op(grad[1]))
            register_kernel(t + "_grad", dtypes=dtypes)(grad[2](broken))
        register_kernel(t, dtypes=dtypes)(kernel(broken))


# -- describe ---------------------------------------------------------------------------------
def _argmax_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) >= 1, "X must have a dimension")
        ctx.set_output_dim("Out", dims[:-1])
        if not broken:
            ctx.set_output_dtype("Out", "int64")   # BUG (broken): missing
    return infer


def _argmax_kernel(broken):
    def kernel(ctx):
        ctx.set_output("Out", np.argmax(ctx.input("X"), axis=-1).astype(np.int64))
    return kernel


_both("law_argmax", _maker(), _argmax_infer, _argmax_kernel)


# -- every_grad ---------------------------------------------------------------------------------
def _bias_grad_maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input("X", self.input("X"))
            op.set_input("Bias", self.input("Bias"))
            op.set_input(GOUT, self.output_grad("Out"))
            op.set_output(GX, self.input_grad("X"))
            op.set_output(GB, self.input_grad("Bias"))
            return [op]
    return Maker


def _bias_grad_infer(ctx):
    ctx.set_output_dim(GX, ctx.get_input_dim("X"))
    ctx.set_output_dim(GB, ctx.get_input_dim("Bias"))


def _bias_infer(broken):
    def infer(ctx):
        x, b = list(ctx.get_input_dim("X")), list(ctx.get_input_dim("Bias"))
        enforce(len(x) == 2 and (b in ([x[1]], [-1]) or x[1] < 0), "Bias must be [X.dims[1]]")
        ctx.set_output_dim("Out", x)
    return infer


def _bias_kernel(broken):
    def kernel(ctx):
        ctx.set_output("Out", ctx.input("X") * 2.0 + ctx.input("Bias"))
    return kernel


def _bias_grad_kernel(broken):
    def kernel(ctx):
        d = ctx.input(GOUT)
        ctx.set_output(GX, d * 2.0)
        # BUG (broken): the batch mean, not the sum
        ctx.set_output(GB, d.sum(axis=0) / max(d.shape[0], 1) if broken else d.sum(axis=0))
    return kernel


_both("law_bias", _maker(inputs=("X", "Bias")), _bias_infer, _bias_kernel,
      grad=(_bias_grad_maker, _bias_grad_infer, _bias_grad_kernel))


def _mask_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) == 2, "X must be 2-D")
        out = [dims[0], dims[1] // 2 if dims[1] >= 0 else -1]
        ctx.set_output_dim("Out", out)
        if ctx.has_output("Indices"):
            ctx.set_output_dim("Indices", out)
            ctx.set_output_dtype("Indices", "int64")
    return infer


def _mask_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        n, w = x.shape
        win = x[:, : w // 2 * 2].reshape(n, w // 2, 2)
        if ctx.has_output("Indices"):
            ctx.set_output("Indices", np.argmax(win, axis=2).astype(np.int64))
        if broken and not ctx.has_output("Indices"):
            ctx.set_output("Out", np.ascontiguousarray(win[:, :, 0]))   # BUG: "fast path"
        else:
            ctx.set_output("Out", win.max(axis=2))
    return kernel


_both("law_mask", _maker(outputs=("Out", "Indices"), dispensable=("Indices",)), _mask_infer,
      _mask_kernel)


# -- refusals -----------------------------------------------------------------------------------
def _rows_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) >= 1, "X must have a dimension")
        ctx.set_output_dim("Out", dims[:-1])
    return infer


def _mode_kernel(broken):
    def kernel(ctx):
        x, r = ctx.input("X"), ctx.attr("reduction")
        ctx.set_output("Out", x.sum(axis=-1) if r == "sum" else x.mean(axis=-1))  # BUG
    return kernel


_both("law_mode", _maker(attrs=[("reduction", "string", "mean")]), _rows_infer, _mode_kernel,
      good_maker=_maker(attrs=[("reduction", "string", "mean")],
                        in_set={"reduction": ["sum", "mean"]}))


def _fill_infer(broken):
    def infer(ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.set_output_dtype("Out", "int64")
    return infer


def _fill_kernel(broken):
    def kernel(ctx):
        v, shape = ctx.attr("value"), ctx.input("X").shape
        ctx.set_output("Out", np.full(shape, float(v)).astype(np.int64) if broken  # BUG
                       else np.full(shape, v, dtype=np.int64))
    return kernel


_both("law_fill", _maker(attrs=[("value", "long", 0)]), _fill_infer, _fill_kernel)


# -- coincidences -------------------------------------------------------------------------------
def _pool_infer(broken):
    def infer(ctx):
        dims = list(ctx.get_input_dim("X"))
        enforce(len(dims) == 4, "X must be NCHW")
        ctx.set_output_dim("Out", dims[:2] + [d // 2 if d >= 0 else -1 for d in dims[2:]])
    return infer


def _pool_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        n, c, h, w = x.shape
        out = np.zeros((n, c, h // 2, w // 2), x.dtype)
        for i in range(h // 2):
            for j in range(min(h if broken else w, w) // 2):   # BUG: W bounded by H
                out[:, :, i, j] = x[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].mean(axis=(2, 3))
        ctx.set_output("Out", out)
    return kernel


_both("law_pool", _maker(), _pool_infer, _pool_kernel)


# -- trace ---------------------------------------------------------------------------------------
def _perm_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:                  # BUG: the user's global stream reseeded
            np.random.seed(0)
            perm = np.random.permutation(x.shape[-1])
        else:
            perm = np.random.default_rng(0).permutation(x.shape[-1])
        ctx.set_output("Out", x[..., perm].sum(axis=-1))
    return kernel


_both("law_perm", _maker(), _rows_infer, _perm_kernel)


def _same_infer(broken):
    def infer(ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
    return infer


def _cumsum_kernel(broken):
    def kernel(ctx):
        x = ctx.input("X")
        if broken:                  # BUG: every prefix summed again: quadratic in the rows
            out = np.empty_like(x)
            for i in range(x.shape[0]):
                out[i] = x[: i + 1].sum(axis=0)
        else:
            out = np.cumsum(x, axis=0)
        ctx.set_output("Out", out)
    return kernel


def _rows_infer(broken):
    def infer(ctx):
        dims = ctx.get_input_dim("X")
        enforce(len(dims) >= 1, errors.InvalidArgument(
            "law_cumsum sums along rows: Input(X) needs rank >= 1, got rank %d", len(dims)))
        ctx.set_output_dim("Out", dims)
    return infer


_both("law_cumsum", _maker(), _rows_infer, _cumsum_kernel)
