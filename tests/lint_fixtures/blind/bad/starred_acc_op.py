"""starred_acc: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class StarredAccOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("StarredAcc operator.")


class StarredAccOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of starred_acc should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("starred_acc", StarredAccOp, StarredAccOpMaker)

@register_kernel("starred_acc")
def starred_acc_kernel(ctx):
    first, *rest = ctx.inputs("X")
    acc = first.astype("float64")
    for r in rest:
        r += acc  # expect: OPK001
    ctx.set_output("Out", acc)
