"""split_copies: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class SplitCopiesOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("SplitCopies operator.")


class SplitCopiesOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of split_copies should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("split_copies", SplitCopiesOp, SplitCopiesOpMaker)

@register_kernel("split_copies")
def split_copies_kernel(ctx):
    parts = [p.copy() for p in np.split(ctx.input("X"), 2)]
    parts[0][...] = 0
    ctx.set_output("Out", np.concatenate(parts))
