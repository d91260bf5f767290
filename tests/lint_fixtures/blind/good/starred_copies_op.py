"""starred_copies: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class StarredCopiesOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("StarredCopies operator.")


class StarredCopiesOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of starred_copies should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("starred_copies", StarredCopiesOp, StarredCopiesOpMaker)

@register_kernel("starred_copies")
def starred_copies_kernel(ctx):
    first, *rest = [a.copy() for a in ctx.inputs("X")]
    for r in rest:
        r += first
    ctx.set_output("Out", first)
