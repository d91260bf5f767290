"""Double-grad ops (Paddle's ``<op>_grad_grad``) of the binary elementwise ops.

Not an op module (no ``_op.py`` suffix): ``elementwise_{add,sub,mul}_op.py`` call
``build_elementwise_double_grad(op_type)``, which registers the kernels of
``<op>_grad_grad`` and returns the grad maker of ``<op>_grad`` and the double-grad op class for
the op file to register.

The grad op reads X, Y (shapes only for add and sub) and DOut (Out@GRAD) and writes dX, dY.
Its grad maker's op reads X, Y, DOut and DDX, DDY (the gradients flowing into dX and dY, each
absent when that gradient was not produced) and writes
* DDOut, the gradient of DOut: DDX + DDY (add), DDX - DDY (sub), DDX * Y + X * DDY (mul),
  each of DDX, DDY broadcast to Out's shape by Paddle's rule (``axis``);
* for mul only: DX = sum-to-X(DOut * DDY) and DY = sum-to-Y(DOut * DDX), the gradients of X
  and Y (add and sub are linear in DOut alone: X and Y get none).
"""
from __future__ import annotations

from opkit import (GradOpMaker, OperatorWithKernel, OpKernelType, enforce, grad_var_name,
                   register_kernel)
from opkit.framework.context import EMPTY_VAR_NAME
from reference_ops._common import elementwise_broadcast, reduce_to_shape

__all__ = ["build_elementwise_double_grad"]

_SIGN = {"elementwise_add": 1.0, "elementwise_sub": -1.0}


def build_elementwise_double_grad(op_type: str):
    """(grad maker of ``<op>_grad``, op class of ``<op>_grad_grad``); registers its kernel."""
    dd_type = op_type + "_grad_grad"
    mul = op_type == "elementwise_mul"

    def apply(self):
        op = self.new_grad_op(dd_type)
        op.set_input("X", self.input("X"))
        op.set_input("Y", self.input("Y"))
        op.set_input("DOut", self.input(grad_var_name("Out")))
        for slot, out in (("DDX", grad_var_name("X")), ("DDY", grad_var_name("Y"))):
            names = [n for n in self.output(out) if n != EMPTY_VAR_NAME]
            if names:
                op.set_input(slot, [grad_var_name(n) for n in names])
        op.set_output("DDOut", self.input_grad(grad_var_name("Out")))
        if mul:
            op.set_output("DX", self.input_grad("X"))
            op.set_output("DY", self.input_grad("Y"))
        return [op]

    def infer_shape(self, ctx):
        enforce(ctx.has_input("DOut"), f"Input(DOut) of {dd_type} should not be null.")
        if ctx.has_output("DDOut"):
            ctx.set_output_dim("DDOut", ctx.get_input_dim("DOut"))
            ctx.share_lod("DOut", "DDOut")
        for slot, src in (("DX", "X"), ("DY", "Y")):
            if ctx.has_output(slot):
                ctx.set_output_dim(slot, ctx.get_input_dim(src))
                ctx.share_lod(src, slot)

    def expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "DOut"), ctx.place)

    def kernel(ctx):
        xp = ctx.xp
        dout = ctx.input("DOut")
        xt, yt = ctx.input_tensor("X"), ctx.input_tensor("Y")
        xv, yv, _ = elementwise_broadcast(xt.shape, yt.shape, ctx.attr("axis"))
        ddx = ctx.input("DDX") if ctx.has_input("DDX") else None
        ddy = ctx.input("DDY") if ctx.has_input("DDY") else None
        ddxb = None if ddx is None else xp.reshape(ddx, tuple(xv))
        ddyb = None if ddy is None else xp.reshape(ddy, tuple(yv))
        if ctx.has_output("DDOut"):
            ddout = xp.zeros(dout.shape, dtype=dout.dtype)
            if mul:
                x, y = xp.reshape(ctx.input("X"), tuple(xv)), xp.reshape(ctx.input("Y"), tuple(yv))
                if ddxb is not None:
                    ddout = ddout + ddxb * y
                if ddyb is not None:
                    ddout = ddout + x * ddyb
            else:
                if ddxb is not None:
                    ddout = ddout + ddxb
                if ddyb is not None:
                    ddout = ddout + dout.dtype.type(_SIGN[op_type]) * ddyb
            ctx.set_output("DDOut", xp.array(xp.broadcast_to(ddout, dout.shape), copy=True))
        if mul:
            for slot, other, view, shape in (("DX", ddyb, xv, xt.shape),
                                             ("DY", ddxb, yv, yt.shape)):
                if not ctx.has_output(slot):
                    continue
                if other is None:
                    ctx.set_output(slot, xp.zeros(tuple(shape), dtype=dout.dtype))
                else:
                    g = reduce_to_shape(xp, dout * other, view, shape)
                    ctx.set_output(slot, xp.array(g, copy=True))

    kernel.__name__ = f"{dd_type}_kernel"
    register_kernel(dd_type, place=("CPU", "GPU"), dtypes=("float32", "float64"))(kernel)
    name = "".join(p.capitalize() for p in op_type.split("_"))
    maker = type(f"{name}DoubleGradMaker", (GradOpMaker,), {"apply": apply,
                                                            "__module__": __name__})
    op_cls = type(f"{name}DoubleGradOp", (OperatorWithKernel,),
                  {"infer_shape": infer_shape, "get_expected_kernel_type": expected_kernel_type,
                   "__module__": __name__})
    return maker, op_cls
