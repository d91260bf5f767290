"""A broken op for the cross-process half of `determinism`, with its correct twin:

| broken op | bug | fails |
| --- | --- | --- |
| broken_set_sum | sums a duplicable X in the iteration order of a set of (index, name) pairs: the order follows the hash seed | determinism |
"""
from opkit import (GradOpMaker, OperatorWithKernel, OpMaker, grad_var_name, register_kernel,
                   register_operator)


class SetSumOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_inputs_dim("X")[0])


class SetSumMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) the tensors to add, all of one shape.").as_duplicable()
        self.add_output("Out", "(Tensor) their sum.")
        self.add_comment("Out = sum of the X inputs (a broken op, or its correct twin).")


class SetSumGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("set_sum_grad")
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class SetSumGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        n = len(ctx.output_names(grad_var_name("X")))
        ctx.set_outputs_dim(grad_var_name("X"), [ctx.get_input_dim(grad_var_name("Out"))] * n)


register_operator("set_sum_grad", SetSumGradOp)


@register_kernel("set_sum_grad")
def set_sum_grad(ctx):
    dout = ctx.input(grad_var_name("Out"))
    n = len(ctx.output_names(grad_var_name("X")))
    ctx.set_outputs(grad_var_name("X"), [dout.copy() for _ in range(n)])


for _t in ("broken_set_sum", "good_set_sum"):
    register_operator(_t, SetSumOp, SetSumMaker, grad_maker=SetSumGradMaker)


@register_kernel("broken_set_sum")
def broken_set_sum(ctx):
    xs = ctx.inputs("X")
    order = {(i, name) for i, name in enumerate(ctx.input_names("X"))}   # BUG: hash order
    out = None
    for i, _ in order:
        out = xs[i].copy() if out is None else out + xs[i]
    ctx.set_output("Out", out)


@register_kernel("good_set_sum")
def good_set_sum(ctx):
    xs = ctx.inputs("X")
    out = xs[0].copy()
    for a in xs[1:]:          # slot order: the same in every process
        out = out + a
    ctx.set_output("Out", out)
