"""Ops whose kernels are right but whose declared parallel signatures (docs/sbp.md) are
wrong; each `good_*` twin declares the right ones. Only the `sbp` check can tell them apart.

| broken op | wrong signature | fails |
| --- | --- | --- |
| broken_sbp_softmax | splittable along every axis, its own (attr axis) included | sbp (values) |
| broken_sbp_rowsum | a reduced axis split gives Out split (it gives a partial sum) | sbp (physical shape) |
| broken_sbp_transpose | a 2-D transpose keeps the split axis (not remapped to the other) | sbp (physical shape) |
| broken_sbp_rowmean | grad op: dX of a split reduced axis from a whole dOut (it divides by the local count) | sbp (grad op values) |
| broken_sbp_batchnorm | Out = X / rows: splittable along the rows (it reads the logical row count) | sbp (values) |
| broken_sbp_affine | Out = 2 X + 1 declared linear (X:P -> Out:P): the bias is added once per device | sbp (partial sum) |
"""
import numpy as np

from opkit import (GradOpMaker, OperatorWithKernel, OpMaker, enforce_eq, grad_var_name,
                   register_kernel, register_operator, register_sbp)
from opkit.sbp import Signature, Where, broadcast, not_attr_axis, partial_sum, split

G = grad_var_name


def _maker(doc, axis_attr=False):
    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) input.")
            self.add_output("Out", "(Tensor) output.")
            if axis_attr:
                self.add_attr("axis", "int", "(int, default -1) the axis.").set_default(-1)
            self.add_comment(doc)
    return Maker


class SameShapeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class RowReduceOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        d = ctx.get_input_dim("X")   # a matrix only: rank 3 would make the kernel's [n, k]
        enforce_eq(len(d), 2, "Input(X) of %s must be a matrix, got shape %s", self.type, d)
        ctx.set_output_dim("Out", [d[0]])


class Transpose2DOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        d = ctx.get_input_dim("X")
        enforce_eq(len(d), 2, "Input(X) of %s must be a matrix, got shape %s", self.type, d)
        ctx.set_output_dim("Out", [d[1], d[0]])


class GradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        src = "X" if ctx.has_input("X") else G("Out")
        dims = list(ctx.get_input_dim(src))
        if src == G("Out") and self.type.endswith("transpose_grad"):
            dims = dims[::-1]
        ctx.set_output_dim(G("X"), dims)


def _grad_maker(grad_type, reads=("X",)):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            for slot in reads:
                op.set_input(slot, self.input(slot) if slot == "X" else self.output(slot))
            op.set_input(G("Out"), self.output_grad("Out"))
            op.set_output(G("X"), self.input_grad("X"))
            return [op]
    return Maker


def _pair(name, op_cls, maker, reads=("X",)):
    for kind in ("broken", "good"):
        t = f"{kind}_sbp_{name}"
        register_operator(t, op_cls, maker, grad_maker=_grad_maker(t + "_grad", reads))
        register_operator(t + "_grad", GradOp)


def _both(name):
    return (f"broken_sbp_{name}", f"good_sbp_{name}")


# -- softmax: any axis but its own -------------------------------------------------------------
_pair("softmax", SameShapeOp, _maker("Out = softmax(X) along attr axis", axis_attr=True),
      reads=("Out",))


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


for _t in _both("softmax"):
    register_kernel(_t)(lambda ctx: ctx.set_output("Out", _softmax(ctx.input("X"),
                                                                   ctx.attr("axis"))))

    @register_kernel(_t + "_grad")
    def _softmax_grad(ctx):
        out, dout = ctx.input("Out"), ctx.input(G("Out"))
        axis = ctx.attr("axis")
        ctx.set_output(G("X"), out * (dout - (dout * out).sum(axis=axis, keepdims=True)))

    register_sbp(_t + "_grad", Signature({"Out": split("i"), G("Out"): split("i"),
                                          G("X"): split("i")}, each="Out",
                                         where=not_attr_axis("axis", of="Out")))

register_sbp("broken_sbp_softmax",           # BUG: its own axis too
             Signature({"X": split("i"), "Out": split("i")}, each="X"))
register_sbp("good_sbp_softmax",
             Signature({"X": split("i"), "Out": split("i")}, each="X",
                       where=not_attr_axis("axis", of="X")))


# -- rowsum: a reduced axis gives a partial sum ------------------------------------------------
_pair("rowsum", RowReduceOp, _maker("Out[n] = sum_d X[n, d]"))
for _t in _both("rowsum"):
    register_kernel(_t)(lambda ctx: ctx.set_output("Out", ctx.input("X").sum(axis=1)))
    register_kernel(_t + "_grad")(lambda ctx: ctx.set_output(
        G("X"), np.broadcast_to(ctx.input(G("Out"))[:, None], ctx.input("X").shape).copy()))
    register_sbp(_t + "_grad",
                 Signature({"X": split(0), G("Out"): split(0), G("X"): split(0)}),
                 Signature({"X": split(1), G("Out"): broadcast, G("X"): split(1)}))
register_sbp("broken_sbp_rowsum", Signature({"X": split(0), "Out": split(0)}),
             Signature({"X": split(1), "Out": split(0)}))       # BUG: split, not partial_sum
register_sbp("good_sbp_rowsum", Signature({"X": split(0), "Out": split(0)}),
             Signature({"X": split(1), "Out": partial_sum}))


# -- transpose: the split axis moves -----------------------------------------------------------
_pair("transpose", Transpose2DOp, _maker("Out = X^T (2-D)"), reads=())
for _t in _both("transpose"):
    register_kernel(_t)(lambda ctx: ctx.set_output("Out", ctx.input("X").T.copy()))
    register_kernel(_t + "_grad")(lambda ctx: ctx.set_output(
        G("X"), ctx.input(G("Out")).T.copy()))
    register_sbp(_t + "_grad", Signature({G("Out"): split(0), G("X"): split(1)}),
                 Signature({G("Out"): split(1), G("X"): split(0)}))
register_sbp("broken_sbp_transpose",          # BUG: the axis is not remapped
             Signature({"X": split("i"), "Out": split("i")}, each="X"))
register_sbp("good_sbp_transpose",
             Signature({"X": split(0), "Out": split(1)}),
             Signature({"X": split(1), "Out": split(0)}))


# -- rowmean: the grad op's signature is wrong --------------------------------------------------
_pair("rowmean", RowReduceOp, _maker("Out[n] = mean_d X[n, d]"))
for _t in _both("rowmean"):
    register_kernel(_t)(lambda ctx: ctx.set_output("Out", ctx.input("X").mean(axis=1)))
    register_kernel(_t + "_grad")(lambda ctx: ctx.set_output(
        G("X"), np.broadcast_to(ctx.input(G("Out"))[:, None] / ctx.input("X").shape[1],
                                ctx.input("X").shape).copy()))
    register_sbp(_t, Signature({"X": split(0), "Out": split(0)}))
register_sbp("broken_sbp_rowmean_grad",
             Signature({"X": split(0), G("Out"): split(0), G("X"): split(0)}),
             # BUG: dX = dOut / D, and each device divides by its own share of D
             Signature({"X": split(1), G("Out"): broadcast, G("X"): split(1)}))
register_sbp("good_sbp_rowmean_grad",
             Signature({"X": split(0), G("Out"): split(0), G("X"): split(0)}))


# -- batchnorm: reads the logical row count ------------------------------------------------------
_pair("batchnorm", SameShapeOp, _maker("Out = X / rows(X)"), reads=("X",))
for _t in _both("batchnorm"):
    register_kernel(_t)(lambda ctx: ctx.set_output("Out", ctx.input("X") / ctx.input("X").shape[0]))
    register_kernel(_t + "_grad")(lambda ctx: ctx.set_output(
        G("X"), ctx.input(G("Out")) / ctx.input("X").shape[0]))
    register_sbp(_t + "_grad", Signature({"X": split(1), G("Out"): split(1), G("X"): split(1)}))
register_sbp("broken_sbp_batchnorm",          # BUG: the rows too
             Signature({"X": split("i"), "Out": split("i")}, each="X"))
register_sbp("good_sbp_batchnorm", Signature({"X": split(1), "Out": split(1)}))


# -- affine: not linear ------------------------------------------------------------------------
_pair("affine", SameShapeOp, _maker("Out = 2 X + 1"), reads=())
for _t in _both("affine"):
    register_kernel(_t)(lambda ctx: ctx.set_output("Out", 2 * ctx.input("X") + 1))
    register_kernel(_t + "_grad")(lambda ctx: ctx.set_output(G("X"), 2 * ctx.input(G("Out"))))
    register_sbp(_t + "_grad",
                 Signature({G("Out"): split("i"), G("X"): split("i")}, each=G("Out")),
                 Signature({G("Out"): partial_sum, G("X"): partial_sum}))
register_sbp("broken_sbp_affine",
             Signature({"X": split("i"), "Out": split("i")}, each="X"),
             Signature({"X": partial_sum, "Out": partial_sum}))     # BUG: the + 1
register_sbp("good_sbp_affine",
             Signature({"X": split("i"), "Out": split("i")}, each="X"))
