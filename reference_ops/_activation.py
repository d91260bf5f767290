"""The activation family, built from one table row per op.

Not an op module (no ``_op.py`` suffix): each ``<op_type>_op.py`` calls
``build_activation(op_type)``, which registers the float32/float64 kernels of the op and its
grad op on CPU and GPU (``ctx.xp`` is numpy or cupy) and returns the classes that the op file
then registers with ``register_operator`` (so the registry names that file as the op's
source).

Every activation maps X to an Out of the same shape and LoD. As in Paddle, the grad op reads
only what the derivative needs: ``X`` (``dep="X"``), ``Out`` (``dep="Out"``) or neither
(``dep=""``, a zero gradient), always with ``Out@GRAD``. Formulas and attr defaults follow
Paddle's activation_op (Fluid 1.8).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import SimpleNamespace

from opkit import (GradOpMaker, OperatorWithKernel, OpKernelType, OpMaker, enforce,
                   grad_var_name, register_kernel)
from reference_ops._extra import add_extra_attrs

__all__ = ["ACTIVATIONS", "Activation", "build_activation"]

DTYPES = ("float32", "float64")


@dataclass
class Activation:
    formula: str
    forward: object                 # (xp, x, attrs) -> out
    backward: object                # (xp, x, out, dout, attrs) -> dx
    dep: str = "X"                  # what the grad op reads besides Out@GRAD: X, Out or ""
    attrs: list = field(default_factory=list)  # (name, type, default, comment)


def _c(x, v):
    """A constant in x's dtype (keeps float32 float32)."""
    return x.dtype.type(v)


def _sigmoid(xp, x):
    # split by sign so that exp never overflows
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, _c(x, 1) / (_c(x, 1) + e), e / (_c(x, 1) + e))


def _softplus(xp, x):
    return xp.maximum(x, _c(x, 0)) + xp.log1p(xp.exp(-xp.abs(x)))


def _erf(xp, x):
    if xp.__name__ == "numpy":
        return xp.vectorize(math.erf, otypes=[x.dtype])(x)
    from cupyx.scipy.special import erf  # GPU only
    return erf(x)


def _gelu(xp, x, a):
    if a["approximate"]:
        k = _c(x, math.sqrt(2 / math.pi))
        return _c(x, 0.5) * x * (_c(x, 1) + xp.tanh(k * (x + _c(x, 0.044715) * x ** 3)))
    return _c(x, 0.5) * x * (_c(x, 1) + _erf(xp, x / _c(x, math.sqrt(2))))


def _gelu_grad(xp, x, dout, a):
    if a["approximate"]:
        k = _c(x, math.sqrt(2 / math.pi))
        inner = k * (x + _c(x, 0.044715) * x ** 3)
        t = xp.tanh(inner)
        dinner = k * (_c(x, 1) + _c(x, 3 * 0.044715) * x * x)
        return dout * (_c(x, 0.5) * (_c(x, 1) + t) + _c(x, 0.5) * x * (_c(x, 1) - t * t) * dinner)
    cdf = _c(x, 0.5) * (_c(x, 1) + _erf(xp, x / _c(x, math.sqrt(2))))
    pdf = xp.exp(-x * x / _c(x, 2)) / _c(x, math.sqrt(2 * math.pi))
    return dout * (cdf + x * pdf)


def _mask(x, m):
    return m.astype(x.dtype)


def _zero_grad(xp, x, out, dout, a):
    return xp.zeros_like(dout)


def _pow_factor(a):
    return a["factor"]


ACTIVATIONS = {
    "exp": Activation(r"Out = e^{X}", lambda xp, x, a: xp.exp(x),
                      lambda xp, x, out, d, a: d * out, dep="Out"),
    "sigmoid": Activation(r"Out = \frac{1}{1 + e^{-X}}", lambda xp, x, a: _sigmoid(xp, x),
                          lambda xp, x, out, d, a: d * out * (_c(out, 1) - out), dep="Out"),
    "logsigmoid": Activation(r"Out = \log \frac{1}{1 + e^{-X}}",
                             lambda xp, x, a: -_softplus(xp, -x),
                             lambda xp, x, out, d, a: d * _sigmoid(xp, -x)),
    "tanh": Activation(r"Out = \tanh(X)", lambda xp, x, a: xp.tanh(x),
                       lambda xp, x, out, d, a: d * (_c(out, 1) - out * out), dep="Out"),
    "tanh_shrink": Activation(r"Out = X - \tanh(X)", lambda xp, x, a: x - xp.tanh(x),
                              lambda xp, x, out, d, a: d * xp.tanh(x) ** 2),
    "hard_shrink": Activation(
        r"Out = X \text{ if } |X| > threshold \text{ else } 0",
        lambda xp, x, a: x * _mask(x, (x < -a["threshold"]) | (x > a["threshold"])),
        lambda xp, x, out, d, a: d * _mask(x, (x < -a["threshold"]) | (x > a["threshold"])),
        attrs=[("threshold", "float", 0.5, "The value of threshold for HardShrink.")]),
    "softshrink": Activation(
        r"Out = X - \lambda \text{ if } X > \lambda;\ X + \lambda \text{ if } X < -\lambda;"
        r"\ 0 \text{ otherwise}",
        # where, not mask * value: 0 * (inf + lambda) would make softshrink(+inf) NaN; a NaN
        # input stays NaN (torch's softshrink too); no arithmetic on inf (no warning)
        lambda xp, x, a: xp.where(x > a["lambda"], x - _c(x, a["lambda"]),
                                  xp.where(x < -a["lambda"], x + _c(x, a["lambda"]),
                                           xp.where(x == x, 0, x))),
        lambda xp, x, out, d, a: d * _mask(x, (x > a["lambda"]) | (x < -a["lambda"])),
        attrs=[("lambda", "float", 0.5, "Non-negative offset.")]),
    "sqrt": Activation(r"Out = \sqrt{X}", lambda xp, x, a: xp.sqrt(x),
                       lambda xp, x, out, d, a: d * _c(out, 0.5) / out, dep="Out"),
    "rsqrt": Activation(r"Out = \frac{1}{\sqrt{X}}", lambda xp, x, a: _c(x, 1) / xp.sqrt(x),
                        lambda xp, x, out, d, a: d * _c(out, -0.5) * out * out * out,
                        dep="Out"),
    "abs": Activation(r"Out = |X|", lambda xp, x, a: xp.abs(x),
                      lambda xp, x, out, d, a: d * xp.sign(x)),
    "ceil": Activation(r"Out = \lceil X \rceil", lambda xp, x, a: xp.ceil(x), _zero_grad,
                       dep=""),
    "floor": Activation(r"Out = \lfloor X \rfloor", lambda xp, x, a: xp.floor(x), _zero_grad,
                        dep=""),
    "round": Activation(    # Paddle 3.x's decimals: round(X 10^d) / 10^d
        r"Out = [X 10^{decimals}] / 10^{decimals}",
        lambda xp, x, a: xp.round(x) if not a["decimals"] else
        xp.round(x * _c(x, 10.0 ** a["decimals"])) / _c(x, 10.0 ** a["decimals"]),
        _zero_grad, dep="",
        attrs=[("decimals", "int", 0, "Round to this many decimals (Paddle 3.x).")]),
    "cos": Activation(r"Out = \cos(X)", lambda xp, x, a: xp.cos(x),
                      lambda xp, x, out, d, a: -d * xp.sin(x)),
    "sin": Activation(r"Out = \sin(X)", lambda xp, x, a: xp.sin(x),
                      lambda xp, x, out, d, a: d * xp.cos(x)),
    "acos": Activation(r"Out = \arccos(X)", lambda xp, x, a: xp.arccos(x),
                       lambda xp, x, out, d, a: -d / xp.sqrt(_c(x, 1) - x * x)),
    "asin": Activation(r"Out = \arcsin(X)", lambda xp, x, a: xp.arcsin(x),
                       lambda xp, x, out, d, a: d / xp.sqrt(_c(x, 1) - x * x)),
    "atan": Activation(r"Out = \arctan(X)", lambda xp, x, a: xp.arctan(x),
                       lambda xp, x, out, d, a: d / (_c(x, 1) + x * x)),
    "leaky_relu": Activation(      # Paddle 2.x: X >= 0 ? X : alpha X (also for alpha > 1)
        r"Out = X \text{ if } X \geq 0 \text{ else } \alpha X",
        lambda xp, x, a: xp.where(x >= 0, x, _c(x, a["alpha"]) * x),
        lambda xp, x, out, d, a: d * xp.where(x >= 0, _c(x, 1), _c(x, a["alpha"])),
        attrs=[("alpha", "float", 0.02, "The small negative slope.")]),
    "gelu": Activation(
        r"Out = 0.5 X (1 + erf(X / \sqrt{2}))  (approximate: the tanh formula)",
        lambda xp, x, a: _gelu(xp, x, a), lambda xp, x, out, d, a: _gelu_grad(xp, x, d, a),
        attrs=[("approximate", "bool", False, "Use the tanh approximation.")]),
    "brelu": Activation(
        r"Out = \min(\max(X, t_{min}), t_{max})",
        lambda xp, x, a: xp.clip(x, _c(x, a["t_min"]), _c(x, a["t_max"])),
        lambda xp, x, out, d, a: d * _mask(x, (x > a["t_min"]) & (x < a["t_max"])),
        attrs=[("t_min", "float", 0.0, "The min marginal value of BRelu."),
               ("t_max", "float", 24.0, "The max marginal value of BRelu.")]),
    "relu6": Activation(
        r"Out = \min(\max(0, X), threshold)",
        lambda xp, x, a: xp.minimum(xp.maximum(x, _c(x, 0)), _c(x, a["threshold"])),
        lambda xp, x, out, d, a: d * _mask(out, (out > 0) & (out < a["threshold"])),
        dep="Out", attrs=[("threshold", "float", 6.0, "The threshold value of Relu6.")]),
    "hard_swish": Activation(
        r"Out = \frac{X \min(\max(0, X + offset), threshold)}{scale}",
        lambda xp, x, a: x * xp.minimum(xp.maximum(x + _c(x, a["offset"]), _c(x, 0)),
                                        _c(x, a["threshold"])) / _c(x, a["scale"]),
        lambda xp, x, out, d, a: d * xp.where(
            x + a["offset"] <= 0, _c(x, 0),
            xp.where(x + a["offset"] < a["threshold"],
                     (_c(x, 2) * x + _c(x, a["offset"])) / _c(x, a["scale"]),
                     _c(x, a["threshold"] / a["scale"]))),
        attrs=[("threshold", "float", 6.0, "The threshold parameter."),
               ("scale", "float", 6.0, "The scale parameter."),
               ("offset", "float", 3.0, "The offset parameter.")]),
    "soft_relu": Activation(
        r"Out = \ln(1 + \exp(\max(\min(X, threshold), -threshold)))",
        lambda xp, x, a: _softplus(xp, xp.clip(x, _c(x, -a["threshold"]),
                                               _c(x, a["threshold"]))),
        lambda xp, x, out, d, a: d * _sigmoid(xp, x) * _mask(
            x, (x > -a["threshold"]) & (x < a["threshold"])),
        attrs=[("threshold", "float", 40.0, "The threshold value of SoftRelu.")]),
    "elu": Activation(
        r"Out = \max(0, X) + \min(0, \alpha (e^X - 1))",
        lambda xp, x, a: xp.where(x > 0, x, _c(x, a["alpha"]) * xp.expm1(xp.minimum(x, _c(x, 0)))),
        lambda xp, x, out, d, a: d * xp.where(x > 0, _c(x, 1),
                                              _c(x, a["alpha"]) * xp.exp(xp.minimum(x, _c(x, 0)))),
        attrs=[("alpha", "float", 1.0, "The alpha value of ELU.")]),
    "reciprocal": Activation(r"Out = \frac{1}{X}", lambda xp, x, a: _c(x, 1) / x,
                             lambda xp, x, out, d, a: -d * out * out, dep="Out"),
    "log": Activation(r"Out = \ln(X)", lambda xp, x, a: xp.log(x),
                      lambda xp, x, out, d, a: d / x),
    "log1p": Activation(r"Out = \ln(1 + X)", lambda xp, x, a: xp.log1p(x),
                        lambda xp, x, out, d, a: d / (_c(x, 1) + x)),
    "pow": Activation(
        r"Out = X^{factor}  (factor from Input(FactorTensor) when given)",
        lambda xp, x, a: xp.power(x, _c(x, _pow_factor(a))),
        lambda xp, x, out, d, a: d * _c(x, _pow_factor(a)) * xp.power(
            x, _c(x, _pow_factor(a) - 1)),
        attrs=[("factor", "float", 1.0, "The exponential factor of Pow.")]),
    "stanh": Activation(
        r"Out = b \tanh(a X)", lambda xp, x, a: _c(x, a["scale_b"]) * xp.tanh(
            _c(x, a["scale_a"]) * x),
        lambda xp, x, out, d, a: d * _c(x, a["scale_a"] * a["scale_b"]) * (
            _c(x, 1) - xp.tanh(_c(x, a["scale_a"]) * x) ** 2),
        attrs=[("scale_a", "float", 0.67, "The scale parameter of a for the input."),
               ("scale_b", "float", 1.7159, "The scale parameter of b for the input.")]),
    "softplus": Activation(       # Paddle 2.x's beta and threshold (defaults: 1.8's formula)
        r"Out = \frac{1}{\beta} \ln(1 + e^{\beta X}) \text{ (X if } \beta X > threshold)",
        lambda xp, x, a: xp.where(_c(x, a["beta"]) * x > _c(x, a["threshold"]), x,
                                  _softplus(xp, _c(x, a["beta"]) * x) / _c(x, a["beta"])),
        lambda xp, x, out, d, a: d * xp.where(
            _c(x, a["beta"]) * x > _c(x, a["threshold"]), _c(x, 1),
            _sigmoid(xp, _c(x, a["beta"]) * x)),
        attrs=[("beta", "float", 1.0, "The multiplier of X (Paddle 2.x)."),
               ("threshold", "float", 20.0,
                "Above beta X > threshold, Out = X (Paddle 2.x).")]),
    "softsign": Activation(r"Out = \frac{X}{1 + |X|}", lambda xp, x, a: x / (_c(x, 1) + xp.abs(x)),
                           lambda xp, x, out, d, a: d / (_c(x, 1) + xp.abs(x)) ** 2),
    "thresholded_relu": Activation(
        r"Out = X \text{ if } X > threshold \text{ else } value",
        # x * mask + value * (1 - mask): NaN stays NaN, as Paddle's (x > t) * x kernel gives
        lambda xp, x, a: x * _mask(x, x > a["threshold"]) +
        _c(x, a["value"]) * _mask(x, ~(x > a["threshold"])),
        lambda xp, x, out, d, a: d * _mask(x, x > a["threshold"]),
        attrs=[("threshold", "float", 1.0, "The threshold location of activation."),
               ("value", "float", 0.0, "Out where X <= threshold (Paddle 2.x / 3.x).")]),
    "hard_sigmoid": Activation(
        r"Out = \max(0, \min(1, slope X + offset))",
        lambda xp, x, a: xp.clip(_c(x, a["slope"]) * x + _c(x, a["offset"]), _c(x, 0),
                                 _c(x, 1)),
        lambda xp, x, out, d, a: d * _c(out, a["slope"]) * _mask(out, (out > 0) & (out < 1)),
        dep="Out", attrs=[("slope", "float", 0.2, "The slope of the linear approximation."),
                          ("offset", "float", 0.5, "The offset of the linear approximation.")]),
    "swish": Activation(
        r"Out = \frac{X}{1 + e^{-\beta X}}",
        lambda xp, x, a: x * _sigmoid(xp, _c(x, a["beta"]) * x),
        lambda xp, x, out, d, a: d * (
            _sigmoid(xp, _c(x, a["beta"]) * x) * (
                _c(x, 1) + _c(x, a["beta"]) * x * (_c(x, 1) - _sigmoid(xp, _c(x, a["beta"]) * x)))),
        attrs=[("beta", "float", 1.0, "Constant beta of swish operator.")]),
}


# Second derivatives, for the double-grad ops (Paddle's <op>_grad_grad): the grad op computes
# dX = dOut * h(dep) with dep = X or Out (ACTIVATIONS[op].dep); SECOND[op](xp, dep, attrs) is
# h'(dep). The double-grad op reads dep, DOut and DDX (the gradient flowing into dX) and
# writes DDOut = DDX * h(dep) (the gradient of DOut) and DX / DOutNew = DDX * DOut * h'(dep)
# (the gradient of dep: DX when dep is X, DOutNew when it is Out).
SECOND = {
    "tanh": lambda xp, o, a: _c(o, -2) * o,
    "sigmoid": lambda xp, o, a: _c(o, 1) - _c(o, 2) * o,
    "sqrt": lambda xp, o, a: _c(o, -0.5) / (o * o),
    "rsqrt": lambda xp, o, a: _c(o, -1.5) * o * o,
    "exp": lambda xp, o, a: xp.ones_like(o),
    "reciprocal": lambda xp, o, a: _c(o, -2) * o,
    "log": lambda xp, x, a: _c(x, -1) / (x * x),
    "leaky_relu": lambda xp, x, a: xp.zeros_like(x),
    "abs": lambda xp, x, a: xp.zeros_like(x),
    "elu": lambda xp, x, a: xp.where(x > 0, _c(x, 0),
                                     _c(x, a["alpha"]) * xp.exp(xp.minimum(x, _c(x, 0)))),
    "softplus": lambda xp, x, a: _sigmoid(xp, x) * (_c(x, 1) - _sigmoid(xp, x)),
}


def _camel(op_type: str) -> str:
    return "".join(p.capitalize() for p in op_type.split("_"))


def build_activation(op_type: str) -> SimpleNamespace:
    """Register the kernels of ``op_type`` (a key of ACTIVATIONS) and its grad op; return
    ``op``, ``maker``, ``grad_maker`` and ``grad_op`` for the op file to register."""
    spec = ACTIVATIONS[op_type]
    name = _camel(op_type)
    grad_type = op_type + "_grad"
    dout_name, dx_name = grad_var_name("Out"), grad_var_name("X")

    def make(self):
        self.add_input("X", f"(Tensor) Input of {name} operator.")
        if op_type == "pow":
            self.add_input("FactorTensor", "(Tensor<float>, optional) The exponential factor "
                           "of Pow, shape [1]; it takes priority over attr factor."
                           ).as_dispensable()
        self.add_output("Out", f"(Tensor) Output of {name} operator, same shape and LoD as X.")
        for attr_name, attr_type, default, comment in spec.attrs:
            self.add_attr(attr_name, attr_type, f"({attr_type}, default {default}) {comment}",
                          default=default)
        add_extra_attrs(self, "use_mkldnn", "use_cudnn")
        self.add_comment(f"{name} Activation Operator.\n\n$${spec.formula}$$\n")

    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), f"Input(X) of {name}Op should not be null.")
        enforce(ctx.has_output("Out"), f"Output(Out) of {name}Op should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")

    def expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)

    def apply(self):
        op = self.new_grad_op(grad_type)
        if spec.dep:
            op.set_input(spec.dep, self.input(spec.dep) if spec.dep == "X"
                         else self.output(spec.dep))
        if op_type == "pow" and self.input("FactorTensor"):
            op.set_input("FactorTensor", self.input("FactorTensor"))
        op.set_input(dout_name, self.output_grad("Out"))
        op.set_output(dx_name, self.input_grad("X"))
        return [op]

    ref = spec.dep or dout_name

    def grad_infer_shape(self, ctx):
        enforce(ctx.has_input(dout_name),
                f"Input(Out@GRAD) of {name}GradOp should not be null.")
        ctx.set_output_dim(dx_name, ctx.get_input_dim(ref))
        ctx.share_lod(ref, dx_name)

    def grad_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, dout_name), ctx.place)

    maker = type(f"{name}OpMaker", (OpMaker,), {"make": make, "__module__": __name__})
    op_cls = type(f"{name}Op", (OperatorWithKernel,),
                  {"infer_shape": infer_shape, "get_expected_kernel_type": expected_kernel_type,
                   "__module__": __name__})
    grad_maker = type(f"{name}GradMaker", (GradOpMaker,), {"apply": apply,
                                                           "__module__": __name__})
    grad_cls = type(f"{name}GradOp", (OperatorWithKernel,),
                    {"infer_shape": grad_infer_shape,
                     "get_expected_kernel_type": grad_expected_kernel_type,
                     "__module__": __name__})

    def attrs_of(ctx):
        attrs = {a[0]: ctx.attr(a[0]) for a in spec.attrs}
        if op_type == "pow" and ctx.has_input("FactorTensor"):
            attrs["factor"] = float(ctx.input("FactorTensor").reshape(-1)[0])
        return attrs

    def kernel(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", spec.forward(ctx.xp, x, attrs_of(ctx)).astype(x.dtype, copy=False))

    def grad_kernel(ctx):
        dout = ctx.input(dout_name)
        x = ctx.input("X") if spec.dep == "X" else None
        out = ctx.input("Out") if spec.dep == "Out" else None
        dx = spec.backward(ctx.xp, x, out, dout, attrs_of(ctx))
        ctx.set_output(dx_name, dx.astype(dout.dtype, copy=False))

    kernel.__name__ = f"{op_type}_kernel"
    grad_kernel.__name__ = f"{op_type}_grad_kernel"
    register_kernel(op_type, place=("CPU", "GPU"), dtypes=DTYPES)(kernel)
    register_kernel(grad_type, place=("CPU", "GPU"), dtypes=DTYPES)(grad_kernel)
    _declare_sbp(op_type, spec)
    ns = SimpleNamespace(op=op_cls, maker=maker, grad_maker=grad_maker, grad_op=grad_cls,
                         double_grad_maker=None, double_grad_op=None)
    if op_type in SECOND:
        _build_double_grad(ns, op_type, spec, name, attrs_of)
    return ns


def _declare_sbp(op_type: str, spec: Activation) -> None:
    """The parallel signatures (docs/sbp.md): split along any axis; the grad op is linear in
    Out@GRAD."""
    from reference_ops._sbp import declare_unary

    declare_unary(op_type, grad_reads=(spec.dep,) if spec.dep else (),
                  extra=("FactorTensor",) if op_type == "pow" else ())


def _build_double_grad(ns, op_type, spec, name, attrs_of):
    """``<op>_grad``'s grad maker and ``<op>_grad_grad`` (see SECOND), onto ``ns``."""
    dd_type = op_type + "_grad_grad"
    dout_name, dx_name = grad_var_name("Out"), grad_var_name("X")
    dep_out = "DX" if spec.dep == "X" else "DOutNew"

    def apply(self):
        op = self.new_grad_op(dd_type)
        op.set_input(spec.dep, self.input(spec.dep))
        op.set_input("DOut", self.input(dout_name))
        op.set_input("DDX", self.output_grad(dx_name))
        op.set_output("DDOut", self.input_grad(dout_name))
        op.set_output(dep_out, self.input_grad(spec.dep))
        return [op]

    def infer_shape(self, ctx):
        enforce(ctx.has_input("DDX"), f"Input(DDX) of {name}DoubleGradOp should not be null.")
        for slot in ("DDOut", dep_out):
            if ctx.has_output(slot):
                ctx.set_output_dim(slot, ctx.get_input_dim("DDX"))
                ctx.share_lod("DDX", slot)

    def expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "DDX"), ctx.place)

    def kernel(ctx):
        xp, ddx = ctx.xp, ctx.input("DDX")
        dep = ctx.input(spec.dep)
        x, out = (dep, None) if spec.dep == "X" else (None, dep)
        attrs = attrs_of(ctx)
        if ctx.has_output("DDOut"):
            ctx.set_output("DDOut", spec.backward(xp, x, out, ddx, attrs).astype(
                ddx.dtype, copy=False))
        if ctx.has_output(dep_out):
            d = ddx * ctx.input("DOut") * SECOND[op_type](xp, dep, attrs)
            ctx.set_output(dep_out, d.astype(ddx.dtype, copy=False))

    kernel.__name__ = f"{op_type}_grad_grad_kernel"
    register_kernel(dd_type, place=("CPU", "GPU"), dtypes=DTYPES)(kernel)
    ns.double_grad_maker = type(f"{name}DoubleGradMaker", (GradOpMaker,),
                                {"apply": apply, "__module__": __name__})
    ns.double_grad_op = type(f"{name}DoubleGradOp", (OperatorWithKernel,),
                             {"infer_shape": infer_shape,
                              "get_expected_kernel_type": expected_kernel_type,
                              "__module__": __name__})
