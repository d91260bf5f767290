"""attr_copy: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class AttrCopyOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("AttrCopy operator.")


class AttrCopyOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of attr_copy should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("attr_copy", AttrCopyOp, AttrCopyOpMaker)

class AttrCopyKernel:
    def compute(self, ctx):
        self.x = ctx.input("X").copy()
        self.factor = ctx.attr("scale")
        self._apply()
        ctx.set_output("Out", self.x)

    def _apply(self):
        self.x *= self.factor


register_kernel("attr_copy")(AttrCopyKernel)
