"""Broken ops for the variant checks, each with a correct twin (`broken_*` / `good_*`):

| broken op | bug | fails |
| --- | --- | --- |
| broken_layout_scale | reads its input in memory order (`ravel(order="K")`) | layout |
| broken_empty_center | subtracts row 0 (`x[0]`): IndexError on an empty batch | empty |
| broken_naive_softmax | exp without subtracting the max: float32 overflow at 100 | extremal |
| broken_kink_relu | relu's grad gives half the gradient at exactly 0 | kinks |
| broken_dedup_sum | sums a duplicable slot keyed by variable name | repeated_input |
| broken_twice_rows | infer_shape doubles dim 0 without guarding -1 (-2) | infer_shape |
| broken_seq_last | unpacks a 1-level LoD (`(offsets,) = lod`): ValueError on 2 levels | lod |
"""
import numpy as np

from opkit import (
    GradOpMaker,
    OperatorWithKernel,
    OpMaker,
    errors,
    grad_var_name,
    register_kernel,
    register_operator,
)


def _unary_maker(doc):
    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) input.")
            self.add_output("Out", "(Tensor) output.")
            self.add_comment(doc)
    return Maker


class SameShapeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class SameShapeGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))


def _grad_maker(grad_type, with_x=True, with_out=False):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            if with_x:
                op.set_input("X", self.input("X"))
            if with_out:
                op.set_input("Out", self.output("Out"))
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            return [op]
    return Maker


def _pair(name, op_cls, maker, grad=True, with_out=False, grad_cls=SameShapeGradOp):
    for kind in ("broken", "good"):
        t = f"{kind}_{name}"
        if grad:
            register_operator(t, op_cls, maker,
                              grad_maker=_grad_maker(t + "_grad", with_x=not with_out,
                                                     with_out=with_out))
            register_operator(t + "_grad", grad_cls)
        else:
            register_operator(t, op_cls, maker)


# -- layout ----------------------------------------------------------------------------------
_pair("layout_scale", SameShapeOp, _unary_maker("Out = 2 X"))


@register_kernel("broken_layout_scale")
def broken_layout_scale(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x.ravel(order="K").reshape(x.shape) * 2)   # BUG: memory order


@register_kernel("good_layout_scale")
def good_layout_scale(ctx):
    ctx.set_output("Out", ctx.input("X") * 2)


@register_kernel("broken_layout_scale_grad")
@register_kernel("good_layout_scale_grad")
def layout_scale_grad(ctx):
    ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")) * 2)


# -- empty -----------------------------------------------------------------------------------
_pair("empty_center", SameShapeOp, _unary_maker("Out = X - X[0]"), grad=False)


@register_kernel("broken_empty_center")
def broken_empty_center(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x - x[0])                                   # BUG: x[0] of 0 rows


@register_kernel("good_empty_center")
def good_empty_center(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x - x[0] if x.shape[0] else x.copy())


# -- extremal --------------------------------------------------------------------------------
_pair("naive_softmax", SameShapeOp, _unary_maker("Out = softmax(X) along the last axis"),
      grad=False)


@register_kernel("broken_naive_softmax")
def broken_naive_softmax(ctx):
    x = ctx.input("X")
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)                                                 # BUG: no max subtracted
        ctx.set_output("Out", e / e.sum(axis=-1, keepdims=True))


@register_kernel("good_naive_softmax")
def good_naive_softmax(ctx):
    x = ctx.input("X")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    ctx.set_output("Out", e / e.sum(axis=-1, keepdims=True))


# -- kinks -----------------------------------------------------------------------------------
_pair("kink_relu", SameShapeOp, _unary_maker("Out = max(X, 0)"))


@register_kernel("broken_kink_relu")
@register_kernel("good_kink_relu")
def kink_relu(ctx):
    ctx.set_output("Out", np.maximum(ctx.input("X"), 0))


@register_kernel("broken_kink_relu_grad")
def broken_kink_relu_grad(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), (dout * ((x > 0) + 0.5 * (x == 0))).astype(dout.dtype))  # BUG


@register_kernel("good_kink_relu_grad")
def good_kink_relu_grad(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    ctx.set_output(grad_var_name("X"), (dout * (x > 0)).astype(dout.dtype))


# -- repeated_input --------------------------------------------------------------------------
class DedupSumMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor, duplicable) the addends.").as_duplicable()
        self.add_output("Out", "(Tensor) their sum.")
        self.add_comment("Out = sum of X")


class DedupSumOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_inputs_dim("X")[0])


class DedupSumGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("dedup_sum_grad")
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class DedupSumGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        n = len(ctx.output_names(grad_var_name("X")))
        ctx.set_outputs_dim(grad_var_name("X"), [ctx.get_input_dim(grad_var_name("Out"))] * n)


register_operator("dedup_sum_grad", DedupSumGradOp)


@register_kernel("dedup_sum_grad")
def dedup_sum_grad(ctx):
    dout = ctx.input(grad_var_name("Out"))
    n = len(ctx.output_names(grad_var_name("X")))
    ctx.set_outputs(grad_var_name("X"), [dout.copy() for _ in range(n)])


for _t in ("broken_dedup_sum", "good_dedup_sum"):
    register_operator(_t, DedupSumOp, DedupSumMaker, grad_maker=DedupSumGradMaker)


@register_kernel("broken_dedup_sum")
def broken_dedup_sum(ctx):
    by_name = dict(zip(ctx.input_names("X"), ctx.inputs("X")))      # BUG: keyed by name
    ctx.set_output("Out", sum(a.astype(a.dtype) for a in by_name.values()))


@register_kernel("good_dedup_sum")
def good_dedup_sum(ctx):
    xs = ctx.inputs("X")
    out = xs[0].copy()
    for a in xs[1:]:
        out = out + a
    ctx.set_output("Out", out)


# -- infer_shape -----------------------------------------------------------------------------
class BrokenTwiceRowsOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        d = list(ctx.get_input_dim("X"))
        ctx.set_output_dim("Out", [2 * d[0]] + d[1:])                 # BUG: -1 becomes -2


class GoodTwiceRowsOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        d = list(ctx.get_input_dim("X"))
        ctx.set_output_dim("Out", [2 * d[0] if d[0] >= 0 else -1] + d[1:])


register_operator("broken_twice_rows", BrokenTwiceRowsOp, _unary_maker("Out = concat(X, X)"))
register_operator("good_twice_rows", GoodTwiceRowsOp, _unary_maker("Out = concat(X, X)"))


@register_kernel("broken_twice_rows")
@register_kernel("good_twice_rows")
def twice_rows(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", np.concatenate([x, x], axis=0))


# -- lod (two levels) ------------------------------------------------------------------------
class SeqLastOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        d = list(ctx.get_input_dim("X"))
        ctx.set_output_dim("Out", [-1] + d[1:])


register_operator("broken_seq_last", SeqLastOp,
                  _unary_maker("Out[i] = the last row of sequence i (of the last LoD level)"))
register_operator("good_seq_last", SeqLastOp,
                  _unary_maker("Out[i] = the last row of sequence i (of the last LoD level)"))


def _last_rows(x, offsets):
    rows = [x[offsets[i + 1] - 1] if offsets[i + 1] > offsets[i] else np.zeros(x.shape[1:],
                                                                              x.dtype)
            for i in range(len(offsets) - 1)]
    return np.stack(rows) if rows else np.zeros((0,) + x.shape[1:], x.dtype)


@register_kernel("broken_seq_last")
def broken_seq_last(ctx):
    x = ctx.input("X")
    (offsets,) = ctx.input_tensor("X").lod                           # BUG: assumes 1 level
    ctx.set_output("Out", _last_rows(x, offsets))


@register_kernel("good_seq_last")
def good_seq_last(ctx):
    x = ctx.input("X")
    lod = ctx.input_tensor("X").lod
    if len(lod) != 1:
        raise errors.InvalidArgument("seq_last takes a 1-level LoD, got %d levels", len(lod))
    ctx.set_output("Out", _last_rows(x, lod[0]))
