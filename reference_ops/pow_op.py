"""pow: an activation (formula and gradient in reference_ops/_activation.py), plus Paddle's
integer kernels (Paddle 3.x registers pow for int32 / int64: Out = X ** int(factor), the
factor truncated toward zero as Paddle's static_cast<T>(factor) does; no gradient)."""
import math

from opkit import enforce, errors, register_kernel, register_operator
from reference_ops._activation import build_activation

_ops = build_activation("pow")
register_operator("pow", _ops.op, _ops.maker, grad_maker=_ops.grad_maker)
register_operator("pow_grad", _ops.grad_op)


@register_kernel("pow", place=("CPU", "GPU"), dtypes=("int32", "int64"))
def pow_int_kernel(ctx):
    x = ctx.input("X")
    factor = (float(ctx.input("FactorTensor").reshape(-1)[0]) if ctx.has_input("FactorTensor")
              else float(ctx.attr("factor")))
    enforce(math.isfinite(factor), errors.InvalidArgument(
        "pow on %s: factor %s is not finite (an integer power needs a finite exponent)",
        x.dtype.name, factor))
    exponent = int(factor)      # truncated toward zero, as static_cast<int64_t>(factor)
    enforce(exponent >= 0, errors.InvalidArgument(
        "pow on %s: factor %s gives the negative integer exponent %d, whose result is not "
        "an integer (use a float X)", x.dtype.name, factor, exponent))
    ctx.set_output("Out", ctx.xp.power(x, x.dtype.type(exponent)).astype(x.dtype, copy=False))
