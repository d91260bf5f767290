"""The reduce ops (reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod), built from
one table row each.

Not an op module (no ``_op.py`` suffix): each ``<op_type>_op.py`` calls
``build_reduce(op_type)`` (it registers the kernels and returns the classes that the op
file registers, so that the registry names that file as the op's source).

Semantics of Paddle's reduce ops (Fluid 1.8): reduce X over the dims ``dim`` (negative counts from the end); ``reduce_all`` (or ``dim`` naming every
dim) reduces over all of them; ``keep_dim`` keeps reduced dims as 1, else they are
removed, and an Out that would have no dims has shape [1]. Gradients: sum broadcasts
Out@GRAD, mean divides it by the number of reduced elements, max/min give it to every
element equal to the extreme (ties share it, as in Paddle), prod gives Out@GRAD times the
product of the other elements (Out / X where no element is 0).

Paddle 2.x's dtype attrs (Paddle's VarType numbers; -1, the default, casts nothing):
``out_dtype`` casts X to that dtype and reduces in it, Out has it (paddle.sum(x, dtype=));
``in_dtype`` is the dtype the gradient is made in: Out@GRAD is cast to it first, X@GRAD
keeps X's dtype (Paddle's reduce grad kernel).
"""
from __future__ import annotations

from types import SimpleNamespace

from opkit import (GradOpMaker, OperatorWithKernel, OpKernelType, OpMaker, enforce, errors,
                   grad_var_name, register_kernel)
from reference_ops._common import reduce_dims
from reference_ops._dtype import VAR_TYPE_DTYPES
from opkit.framework import domains as D

__all__ = ["REDUCES", "build_reduce", "reduce_dims"]

FLOATS = ("float32", "float64")
# in_dtype / out_dtype: -1 or the VarType number of a dtype opkit computes in
_DTYPE_CODES = [-1] + [code for code, name in VAR_TYPE_DTYPES.items()
                       if name in ("bool", "int32", "int64", "float32", "float64")]
# op_type -> (formula, numpy function, forward dtypes, grad reads X and Out)
REDUCES = {
    "reduce_sum": (r"\sum", "sum", FLOATS + ("int32", "int64"), False),
    "reduce_mean": (r"\mathrm{mean}", "mean", FLOATS, False),
    "reduce_max": (r"\max", "max", FLOATS + ("int32", "int64"), True),
    "reduce_min": (r"\min", "min", FLOATS + ("int32", "int64"), True),
    "reduce_prod": (r"\prod", "prod", FLOATS + ("int32", "int64"), True),
}


def out_dims(x_dims, dims, keep_dim: bool):
    if keep_dim:
        return [1 if i in dims else d for i, d in enumerate(x_dims)]
    out = [d for i, d in enumerate(x_dims) if i not in dims]
    return out or [1]


def _camel(op_type: str) -> str:
    return "".join(p.capitalize() for p in op_type.split("_"))


def build_reduce(op_type: str) -> SimpleNamespace:
    formula, fn_name, dtypes, grad_reads_values = REDUCES[op_type]
    name = _camel(op_type)
    grad_type = op_type + "_grad"
    dout_name, dx_name = grad_var_name("Out"), grad_var_name("X")

    def make(self):
        self.add_input("X", "(Tensor) The input tensor.")
        self.add_output("Out", "(Tensor) The result tensor.")
        self.add_attr("dim", "ints", "(list<int>, default {0}) The dimensions to reduce; "
                      "negative counts from the end.", default=[0])
        self.add_attr("keep_dim", "bool", "(bool, default false) Keep the reduced dimensions "
                      "(as size 1).", default=False)
        self.add_attr("reduce_all", "bool", "(bool, default false) Reduce over all "
                      "dimensions.", default=False)
        self.add_attr("in_dtype", "int", "(int, default -1) Paddle's VarType number of the "
                      "dtype the gradient is computed in: Out@GRAD is cast to it before X@GRAD "
                      "is made (X@GRAD keeps X's dtype); -1: no cast.",
                      default=-1).in_set(_DTYPE_CODES)
        self.add_attr("out_dtype", "int", "(int, default -1) Paddle's VarType number of "
                      "Out's dtype: X is cast to it and reduced in it; -1: X's dtype.",
                      default=-1).in_set(_DTYPE_CODES)
        # declared domains (docs/domains.md)
        self.proto.attr("dim").set_domain(D.axes_of("X"))
        self.add_comment(f"{name} Operator.\n\n$$Out = {formula}_{{dim}} X$$\nreduce_all "
                         "(or a `dim` naming every dimension) reduces over all of them; "
                         "keep_dim keeps the reduced dimensions as 1, otherwise they are "
                         "removed (an Out with no dimension left has shape [1]).\n")

    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), f"Input(X) of {name}Op should not be null.")
        enforce(ctx.has_output("Out"), f"Output(Out) of {name}Op should not be null.")
        x_dims = list(ctx.get_input_dim("X"))
        dims = reduce_dims(len(x_dims), ctx.attr("dim"), ctx.attr("reduce_all"))
        if fn_name in ("max", "min"):
            # the max/min of no elements has no value (Paddle does not define it)
            empty = [d for d in dims if x_dims[d] == 0]
            enforce(not empty, errors.InvalidArgument(
                f"{op_type} reduces dim {empty[0] if empty else ''} of Input(X), whose size "
                f"is 0 (X's shape {x_dims}): the {fn_name} of no elements is undefined"))
        ctx.set_output_dim("Out", out_dims(x_dims, dims, ctx.attr("keep_dim")))
        if ctx.attr("out_dtype") != -1:
            ctx.set_output_dtype("Out", VAR_TYPE_DTYPES[ctx.attr("out_dtype")])
        if dims and dims[0] != 0:
            ctx.share_lod("X", "Out")

    def apply(self):
        op = self.new_grad_op(grad_type)
        op.set_input("X", self.input("X"))
        if grad_reads_values:
            op.set_input("Out", self.output("Out"))
        op.set_input(dout_name, self.output_grad("Out"))
        op.set_output(dx_name, self.input_grad("X"))
        return [op]

    def grad_infer_shape(self, ctx):
        enforce(ctx.has_input(dout_name), f"Input(Out@GRAD) of {name}GradOp should not be null.")
        ctx.set_output_dim(dx_name, ctx.get_input_dim("X"))
        if ctx.attr("out_dtype") != -1 or ctx.attr("in_dtype") != -1:
            ctx.set_output_dtype(dx_name, ctx.get_input_dtype("X"))
        ctx.share_lod("X", dx_name)

    def grad_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, dout_name), ctx.place)

    maker = type(f"{name}OpMaker", (OpMaker,), {"make": make, "__module__": __name__})
    op_cls = type(f"{name}Op", (OperatorWithKernel,), {"infer_shape": infer_shape,
                                                       "__module__": __name__})
    grad_maker = type(f"{name}GradMaker", (GradOpMaker,), {"apply": apply,
                                                           "__module__": __name__})
    grad_cls = type(f"{name}GradOp", (OperatorWithKernel,),
                    {"infer_shape": grad_infer_shape, "get_expected_kernel_type": grad_kernel_type,
                     "__module__": __name__})

    def kernel(ctx):
        xp = ctx.xp
        x = ctx.input("X")
        if ctx.attr("out_dtype") != -1:     # Paddle: X cast to out_dtype, reduced in it
            x = x.astype(VAR_TYPE_DTYPES[ctx.attr("out_dtype")], copy=False)
        dims = reduce_dims(x.ndim, ctx.attr("dim"), ctx.attr("reduce_all"))
        out = getattr(xp, fn_name)(x, axis=tuple(dims), keepdims=True)
        shape = out_dims(list(x.shape), dims, ctx.attr("keep_dim"))
        ctx.set_output("Out", xp.reshape(out, tuple(shape)).astype(x.dtype, copy=False))

    def grad_kernel(ctx):
        xp = ctx.xp
        x_t = ctx.input_tensor("X")
        shape = tuple(int(d) for d in x_t.shape)
        dout = ctx.input(dout_name)
        if ctx.attr("in_dtype") != -1:      # Paddle: Out@GRAD cast to in_dtype first
            dout = dout.astype(VAR_TYPE_DTYPES[ctx.attr("in_dtype")], copy=False)
        dims = reduce_dims(len(shape), ctx.attr("dim"), ctx.attr("reduce_all"))
        kept = tuple(1 if i in dims else d for i, d in enumerate(shape))
        g = xp.reshape(dout, kept)
        if fn_name == "sum":
            dx = xp.broadcast_to(g, shape)
        elif fn_name == "mean":
            n = 1
            for i in dims:
                n *= shape[i]
            dx = xp.broadcast_to(g / dout.dtype.type(max(n, 1)), shape)
        else:
            x = ctx.input("X")
            out = xp.reshape(ctx.input("Out"), kept)
            if fn_name == "prod":
                # the product of the others, also where x holds zeros (not out / x: 0/0)
                zero = x == 0
                ax = tuple(dims)
                nonzero = xp.prod(xp.where(zero, 1, x), axis=ax, keepdims=True)
                count = xp.sum(zero, axis=ax, keepdims=True)
                dx = g * xp.where(zero, xp.where(count == 1, nonzero, 0),
                                  xp.where(count == 0, out / xp.where(zero, 1, x), 0))
            else:
                dx = g * (x == out).astype(dout.dtype)
        dx_dtype = x_t.dtype if (ctx.attr("out_dtype") != -1 or ctx.attr("in_dtype") != -1) \
            else dout.dtype
        ctx.set_output(dx_name, xp.array(dx, dtype=dx_dtype, copy=True))

    kernel.__name__ = f"{op_type}_kernel"
    grad_kernel.__name__ = f"{op_type}_grad_kernel"
    register_kernel(op_type, place=("CPU", "GPU"), dtypes=dtypes)(kernel)
    register_kernel(grad_type, place=("CPU", "GPU"), dtypes=FLOATS)(grad_kernel)
    _declare_sbp(op_type, fn_name, grad_reads_values)
    return SimpleNamespace(op=op_cls, maker=maker, grad_maker=grad_maker, grad_op=grad_cls,
                           grad_no_need_buffer=[] if grad_reads_values else ["X"])


def _declare_sbp(op_type: str, fn_name: str, grad_reads_out: bool) -> None:
    """The parallel signatures (docs/sbp.md). A kept axis splits Out along the axis it lands
    on. A reduced axis: only reduce_sum may split it (each device's sum is a partial sum);
    the mean of a slice divides by the slice's count and the max of a slice is no partial
    anything, so they declare no such signature. Their grad ops may: with Out and Out@GRAD
    whole on every device, the gradient of a slice of X is the slice of the gradient (not
    for the mean, which divides by the number of elements it sees)."""
    from opkit import register_sbp
    from opkit.sbp import Signature, broadcast, partial_sum, split
    from reference_ops._sbp import G, attr_is, is_reduced, reduced_axis

    no_out_cast = attr_is("out_dtype -1", lambda ctx: ctx.attr("out_dtype") == -1)
    no_in_cast = attr_is("in_dtype -1", lambda ctx: ctx.attr("in_dtype") == -1)

    kept, reduced, after = is_reduced(negate=True), is_reduced(), reduced_axis()
    sigs = [Signature({"X": split("i"), "Out": split(after)}, each="X", where=kept)]
    if fn_name == "sum":
        sigs.append(Signature({"X": split("i"), "Out": partial_sum}, each="X", where=reduced))
    if fn_name in ("sum", "mean"):
        # not with out_dtype: each device's cast of its partial X (an int truncates) is no
        # partial of the cast of the sum
        sigs.append(Signature({"X": partial_sum, "Out": partial_sum}, where=no_out_cast))
    register_sbp(op_type, *sigs)
    out = {"Out": split(after)} if grad_reads_out else {}
    out_b = {"Out": broadcast} if grad_reads_out else {}
    grads = [Signature({"X": split("i"), **out, G("Out"): split(after), G("X"): split("i")},
                       each="X", where=kept)]
    if fn_name != "mean":
        grads.append(Signature({"X": split("i"), **out_b, G("Out"): broadcast,
                                G("X"): split("i")}, each="X", where=reduced))
    # not with in_dtype: Out@GRAD's partials are each rounded to in_dtype
    grads.append(Signature({"X": broadcast, **out_b, G("Out"): partial_sum,
                            G("X"): partial_sum}, where=no_in_cast))
    register_sbp(op_type + "_grad", *grads)
