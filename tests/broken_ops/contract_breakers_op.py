"""Broken ops for the paths the author's case never takes: second-order gradients, the
gradient of an output the test does not name, and the distribution a random op samples.
Each with a correct twin (`broken_*` / `good_*`); modelled on real tracker bugs:

| broken op | bug (modelled on) | fails |
| --- | --- | --- |
| broken_dg_tanh | double grad's Out term -DDX*DOut*Out, the factor 2 lost (autograd #317's tanh'' = -x; OneFlow #10237) | double_grad |
| broken_dg_sigmoid | double-grad maker gives DDOut only, no gradient of Out (second derivative dropped; MXNet #15253) | double_grad |
| broken_dg_mul | X*Y double grad's cross terms swapped: DX = DOut*DDX (should be DOut*DDY) | double_grad |
| broken_var_mean | (Var, Mean) of rows; the grad kernel ignores Mean@GRAD (PyTorch #18731, trident #69) | grad_outputs |
| broken_split_pair | halves First, Second; the Second half's gradient scaled by 0.5 | grad_outputs |
| broken_scaled_norm | (2 X, row sums of X^2); the grad maker takes no Norm@GRAD at all | grad_outputs (Norm depends on X, its gradient is dropped) |
| broken_normal | `std` used as the variance: scale sqrt(std) (Distributions.jl #263, Nx #808) | distribution (std varied: the case has std 1) |
| broken_normal_f32 | the float32 kernel squares std (the case samples float64, std 2) | distribution (the other float dtype) |
| broken_uniform | U(min, max) drawn as min + r * max: the width ignored (the case has min 0) | distribution (min varied) |
| broken_dropout_keep | dropout_prob used as the KEEP probability (CS231n #8; the case has p 0.5) | distribution (p varied) |
| broken_dropout_scale | upscale_in_train scales kept values by 1/p, not 1/(1-p) (convnetjs #61; p 0.5) | distribution (p varied) |
"""
import numpy as np

from opkit import (GradOpMaker, OpKernelType, OpMaker, OperatorWithKernel, enforce,
                   grad_var_name, register_kernel, register_operator)
from opkit.framework.context import EMPTY_VAR_NAME

DX, DY, DOUT = grad_var_name("X"), grad_var_name("Y"), grad_var_name("Out")
F = ("float32", "float64")


def _maker(inputs=("X",), outputs=("Out",), attrs=(), intermediate=()):
    class Maker(OpMaker):
        def make(self):
            for n in inputs:
                self.add_input(n, f"(Tensor) {n}.")
            for n in outputs:
                b = self.add_output(n, f"(Tensor) {n}.")
                if n in intermediate:
                    b.as_intermediate()
            for name, kind, default, doc in attrs:
                self.add_attr(name, kind, doc, default)
            self.add_comment("A deliberately broken op (or its correct twin).")
    return Maker


class _Same(OperatorWithKernel):
    """Every output of X's shape (a grad op: every output of its first input's shape)."""

    src = "X"

    def infer_shape(self, ctx):
        for slot in self.outputs:
            if ctx.has_output(slot):
                ctx.set_output_dim(slot, ctx.get_input_dim(self.src))


def _same(src):
    return type(f"Same_{src.replace('@', '_')}", (_Same,), {"src": src})


# -- double_grad: unary activations whose grad op reads Out --------------------------------
def _unary(name, fwd, h, hprime, broken_dd, drop_dout_new=False):
    """Out = fwd(X); grad dX = dOut * h(Out); double grad DDOut = DDX * h(Out),
    DOutNew = DDX * dOut * h'(Out) (broken: broken_dd's or none)."""
    for kind in ("broken", "good"):
        t = f"{kind}_{name}"
        bad = kind == "broken"

        class GradMaker(GradOpMaker):
            def apply(self, t=t):
                op = self.new_grad_op(t + "_grad")
                op.set_input("Out", self.output("Out"))
                op.set_input(DOUT, self.output_grad("Out"))
                op.set_output(DX, self.input_grad("X"))
                return [op]

        class DoubleMaker(GradOpMaker):
            def apply(self, t=t, bad=bad):
                op = self.new_grad_op(t + "_grad_grad")
                op.set_input("Out", self.input("Out"))
                op.set_input("DOut", self.input(DOUT))
                op.set_input("DDX", self.output_grad(DX))
                op.set_output("DDOut", self.input_grad(DOUT))
                if not (bad and drop_dout_new):
                    op.set_output("DOutNew", self.input_grad("Out"))
                return [op]

        register_operator(t, _same("X"), _maker(), grad_maker=GradMaker)
        register_operator(t + "_grad", _same("Out"), grad_maker=DoubleMaker)
        register_operator(t + "_grad_grad", _same("DDX"))

        def kernel(ctx):
            x = ctx.input("X")
            ctx.set_output("Out", fwd(x).astype(x.dtype))

        def grad_kernel(ctx):
            out, dout = ctx.input("Out"), ctx.input(DOUT)
            ctx.set_output(DX, (dout * h(out)).astype(dout.dtype))

        def dd_kernel(ctx, bad=bad):
            out, dout, ddx = ctx.input("Out"), ctx.input("DOut"), ctx.input("DDX")
            if ctx.has_output("DDOut"):
                ctx.set_output("DDOut", (ddx * h(out)).astype(ddx.dtype))
            if ctx.has_output("DOutNew"):
                d = broken_dd(out, dout, ddx) if bad else ddx * dout * hprime(out)
                ctx.set_output("DOutNew", d.astype(ddx.dtype))

        register_kernel(t, dtypes=F)(kernel)
        register_kernel(t + "_grad", dtypes=F)(grad_kernel)
        register_kernel(t + "_grad_grad", dtypes=F)(dd_kernel)


_unary("dg_tanh", np.tanh, lambda o: 1 - o * o, lambda o: -2 * o,
       broken_dd=lambda o, d, dd: -dd * d * o)
_unary("dg_sigmoid", lambda x: 1 / (1 + np.exp(-x)), lambda o: o * (1 - o),
       lambda o: 1 - 2 * o, broken_dd=None, drop_dout_new=True)


# -- double_grad: Out = X * Y (same shapes) ------------------------------------------------
for _kind in ("broken", "good"):
    _t = f"{_kind}_dg_mul"

    class _MulGradMaker(GradOpMaker):
        def apply(self, t=_t):
            op = self.new_grad_op(t + "_grad")
            op.set_input("X", self.input("X"))
            op.set_input("Y", self.input("Y"))
            op.set_input(DOUT, self.output_grad("Out"))
            op.set_output(DX, self.input_grad("X"))
            op.set_output(DY, self.input_grad("Y"))
            return [op]

    class _MulDoubleMaker(GradOpMaker):
        def apply(self, t=_t):
            op = self.new_grad_op(t + "_grad_grad")
            op.set_input("X", self.input("X"))
            op.set_input("Y", self.input("Y"))
            op.set_input("DOut", self.input(DOUT))
            for slot, out in (("DDX", DX), ("DDY", DY)):
                names = [n for n in self.output(out) if n != EMPTY_VAR_NAME]
                if names:
                    op.set_input(slot, [grad_var_name(n) for n in names])
            op.set_output("DDOut", self.input_grad(DOUT))
            op.set_output("DX", self.input_grad("X"))
            op.set_output("DY", self.input_grad("Y"))
            return [op]

    register_operator(_t, _same("X"), _maker(("X", "Y")), grad_maker=_MulGradMaker)
    register_operator(_t + "_grad", type("MulGradShape", (OperatorWithKernel,), {
        "infer_shape": lambda self, ctx: [ctx.set_output_dim(s, ctx.get_input_dim(s[0]))
                                          for s in (DX, DY) if ctx.has_output(s)]}),
        grad_maker=_MulDoubleMaker)
    register_operator(_t + "_grad_grad", type("MulDDShape", (OperatorWithKernel,), {
        "infer_shape": lambda self, ctx: [ctx.set_output_dim(s, ctx.get_input_dim(src))
                                          for s, src in (("DDOut", "DOut"), ("DX", "X"),
                                                         ("DY", "Y")) if ctx.has_output(s)]}))

    @register_kernel(_t, dtypes=F)
    def _mul_kernel(ctx):
        ctx.set_output("Out", ctx.input("X") * ctx.input("Y"))

    @register_kernel(_t + "_grad", dtypes=F)
    def _mul_grad_kernel(ctx):
        x, y, d = ctx.input("X"), ctx.input("Y"), ctx.input(DOUT)
        if ctx.has_output(DX):
            ctx.set_output(DX, d * y)
        if ctx.has_output(DY):
            ctx.set_output(DY, d * x)

    @register_kernel(_t + "_grad_grad", dtypes=F)
    def _mul_dd_kernel(ctx, bad=(_kind == "broken")):
        x, y, d = ctx.input("X"), ctx.input("Y"), ctx.input("DOut")
        ddx = ctx.input("DDX") if ctx.has_input("DDX") else np.zeros_like(x)
        ddy = ctx.input("DDY") if ctx.has_input("DDY") else np.zeros_like(y)
        if ctx.has_output("DDOut"):
            ctx.set_output("DDOut", ddx * y + x * ddy)
        if ctx.has_output("DX"):
            ctx.set_output("DX", d * (ddx if bad else ddy))
        if ctx.has_output("DY"):
            ctx.set_output("DY", d * (ddy if bad else ddx))


# -- grad_outputs: two differentiable outputs -----------------------------------------------
class _RowStats(OperatorWithKernel):
    def infer_shape(self, ctx):
        dims = list(ctx.get_input_dim("X"))
        for slot in ("Var", "Mean"):
            ctx.set_output_dim(slot, dims[:-1])


class _Halves(OperatorWithKernel):
    def infer_shape(self, ctx):
        dims = list(ctx.get_input_dim("X"))
        enforce(dims[-1] < 0 or dims[-1] % 2 == 0, "X's last dim (%s) must be even.", dims[-1])
        half = dims[:-1] + [dims[-1] // 2 if dims[-1] >= 0 else -1]
        for slot in ("First", "Second"):
            ctx.set_output_dim(slot, half)


def _two_output(name, op_cls, outputs, fwd, grad):
    for kind in ("broken", "good"):
        t = f"{kind}_{name}"

        class GradMaker(GradOpMaker):
            def apply(self, t=t):
                op = self.new_grad_op(t + "_grad")
                op.set_input("X", self.input("X"))
                for o in outputs:
                    op.set_input(grad_var_name(o), self.output_grad(o))
                op.set_output(DX, self.input_grad("X"))
                return [op]

        register_operator(t, op_cls, _maker(outputs=outputs), grad_maker=GradMaker)
        register_operator(t + "_grad", _same("X"))
        register_kernel(t, dtypes=F)(fwd)
        register_kernel(t + "_grad", dtypes=F)(grad(kind == "broken"))


def _var_mean(ctx):
    x = ctx.input("X")
    ctx.set_output("Var", x.var(axis=-1))
    ctx.set_output("Mean", x.mean(axis=-1))


def _var_mean_grad(bad):
    def kernel(ctx):
        x = ctx.input("X")
        n = x.shape[-1]
        dvar = ctx.input(grad_var_name("Var"))[..., None]
        dmean = ctx.input(grad_var_name("Mean"))[..., None]
        dx = dvar * 2 * (x - x.mean(axis=-1, keepdims=True)) / n
        if not bad:
            dx = dx + dmean / n
        ctx.set_output(DX, dx.astype(x.dtype))
    return kernel


def _halves(ctx):
    x = ctx.input("X")
    h = x.shape[-1] // 2
    ctx.set_output("First", np.array(x[..., :h]))
    ctx.set_output("Second", np.array(x[..., h:]))


def _halves_grad(bad):
    def kernel(ctx):
        d1, d2 = ctx.input(grad_var_name("First")), ctx.input(grad_var_name("Second"))
        ctx.set_output(DX, np.concatenate([d1, d2 * d2.dtype.type(0.5 if bad else 1.0)],
                                          axis=-1))
    return kernel


# broken_scaled_norm: Y = 2 X and Norm = row sums of X^2; the broken grad maker takes no
# Norm@GRAD at all (the second output's gradient is silently dropped), its twin takes both
class _ScaledNorm(OperatorWithKernel):
    def infer_shape(self, ctx):
        dims = list(ctx.get_input_dim("X"))
        ctx.set_output_dim("Y", dims)
        ctx.set_output_dim("Norm", dims[:-1])


for _kind in ("broken", "good"):
    _t = f"{_kind}_scaled_norm"

    class _NormGradMaker(GradOpMaker):
        def apply(self, t=_t, bad=(_kind == "broken")):
            op = self.new_grad_op(t + "_grad")
            op.set_input("X", self.input("X"))
            op.set_input(grad_var_name("Y"), self.output_grad("Y"))
            if not bad:
                op.set_input(grad_var_name("Norm"), self.output_grad("Norm"))
            op.set_output(DX, self.input_grad("X"))
            return [op]

    register_operator(_t, _ScaledNorm, _maker(outputs=("Y", "Norm")),
                      grad_maker=_NormGradMaker)
    register_operator(_t + "_grad", _same("X"))

    @register_kernel(_t, dtypes=F)
    def _scaled_norm(ctx):
        x = ctx.input("X")
        ctx.set_output("Y", x * x.dtype.type(2))
        ctx.set_output("Norm", (x * x).sum(axis=-1))

    @register_kernel(_t + "_grad", dtypes=F)
    def _scaled_norm_grad(ctx):
        x = ctx.input("X")
        dx = ctx.input(grad_var_name("Y")) * x.dtype.type(2)
        if ctx.has_input(grad_var_name("Norm")):
            dx = dx + x.dtype.type(2) * x * ctx.input(grad_var_name("Norm"))[..., None]
        ctx.set_output(DX, dx)


_two_output("var_mean", _RowStats, ("Var", "Mean"), _var_mean, _var_mean_grad)
_two_output("split_pair", _Halves, ("First", "Second"), _halves, _halves_grad)


# -- distribution: random creation ops -----------------------------------------------------
class _Creation(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.attr("dtype") in ("float32", "float64"),
                "attr dtype must be float32 or float64, got %s", ctx.attr("dtype"))
        ctx.set_output_dim("Out", list(ctx.attr("shape")))
        ctx.set_output_dtype("Out", ctx.attr("dtype"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(ctx.attr("dtype"), ctx.place)


def _creation(name, params, sample):
    attrs = [("shape", "ints", [4], "Output shape."), ("seed", "int", 0, "Random seed."),
             ("dtype", "string", "float32", "Output dtype.")] + list(params)
    for kind in ("broken", "good"):
        t = f"{kind}_{name}"
        register_operator(t, _Creation, _maker(inputs=(), attrs=attrs))

        def kernel(ctx, bad=(kind == "broken")):
            seed = int(ctx.attr("seed"))
            rng = np.random.default_rng(seed if seed else None)
            out = sample(rng, ctx, tuple(ctx.attr("shape")), bad)
            ctx.set_output("Out", out.astype(ctx.attr("dtype")))

        register_kernel(t, dtypes=F)(kernel)


def _normal(rng, ctx, shape, bad):
    std = float(ctx.attr("std"))
    return rng.normal(ctx.attr("mean"), np.sqrt(std) if bad else std, size=shape)


def _uniform(rng, ctx, shape, bad):
    lo, hi = float(ctx.attr("min")), float(ctx.attr("max"))
    r = rng.random(size=shape)
    return lo + r * (hi if bad else hi - lo)


def _normal_f32(rng, ctx, shape, bad):
    # broken: the float32 branch (a kernel of its own in a real framework) squares std
    std = float(ctx.attr("std"))
    if bad and ctx.attr("dtype") == "float32":
        std = std * std
    return rng.normal(ctx.attr("mean"), std, size=shape)


_creation("normal", [("mean", "float", 0.0, "Mean."), ("std", "float", 1.0, "Std.")], _normal)
_creation("normal_f32", [("mean", "float", 0.0, "Mean."), ("std", "float", 1.0, "Std.")],
          _normal_f32)
_creation("uniform", [("min", "float", -1.0, "Min."), ("max", "float", 1.0, "Max.")], _uniform)


# -- distribution: dropout ------------------------------------------------------------------
class _Dropout(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.attr("dropout_implementation") in ("downgrade_in_infer", "upscale_in_train"),
                "attr dropout_implementation must be downgrade_in_infer or upscale_in_train, "
                "got %s", ctx.attr("dropout_implementation"))
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.set_output_dim("Mask", ctx.get_input_dim("X"))
        ctx.set_output_dtype("Mask", "uint8")


def _dropout(name, mask_of, scale_of):
    attrs = [("dropout_prob", "float", 0.5, "Drop probability."),
             ("seed", "int", 0, "Random seed."),
             ("dropout_implementation", "string", "downgrade_in_infer",
              "downgrade_in_infer or upscale_in_train.")]
    for kind in ("broken", "good"):
        t = f"{kind}_{name}"
        bad = kind == "broken"

        class GradMaker(GradOpMaker):
            def apply(self, t=t):
                op = self.new_grad_op(t + "_grad")
                op.set_input("Mask", self.output("Mask"))
                op.set_input(DOUT, self.output_grad("Out"))
                op.set_output(DX, self.input_grad("X"))
                return [op]

        register_operator(t, _Dropout, _maker(outputs=("Out", "Mask"), attrs=attrs,
                                              intermediate=("Mask",)), grad_maker=GradMaker)
        register_operator(t + "_grad", _same(DOUT))

        def kernel(ctx, bad=bad):
            x = ctx.input("X")
            p = float(ctx.attr("dropout_prob"))
            rng = np.random.default_rng(int(ctx.attr("seed")) or None)
            mask = mask_of(rng.random(size=x.shape), p, bad).astype(np.uint8)
            ctx.set_output("Out", (x * mask * scale_of(ctx, p, bad)).astype(x.dtype))
            ctx.set_output("Mask", mask)

        def grad_kernel(ctx, bad=bad):
            d = ctx.input(DOUT)
            p = float(ctx.attr("dropout_prob"))
            ctx.set_output(DX, (d * ctx.input("Mask") * scale_of(ctx, p, bad)).astype(d.dtype))

        register_kernel(t, dtypes=F)(kernel)
        register_kernel(t + "_grad", dtypes=F)(grad_kernel)


def _scale(ctx, p, bad_scale):
    if ctx.attr("dropout_implementation") != "upscale_in_train":
        return 1.0
    keep = p if bad_scale else 1.0 - p
    return 1.0 / keep if keep > 0 else 0.0


_dropout("dropout_keep", lambda r, p, bad: (r < p) if bad else (r >= p),
         lambda ctx, p, bad: _scale(ctx, p, False))
_dropout("dropout_scale", lambda r, p, bad: r >= p, _scale)
