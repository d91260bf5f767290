"""attr_scale: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class AttrScaleOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("AttrScale operator.")


class AttrScaleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of attr_scale should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("attr_scale", AttrScaleOp, AttrScaleOpMaker)

class AttrScaleKernel:
    def compute(self, ctx):
        self.x = ctx.input("X")
        self.factor = ctx.attr("scale")
        self._apply()
        ctx.set_output("Out", self.x.copy())

    def _apply(self):
        self.x *= self.factor  # expect: OPK001


register_kernel("attr_scale")(AttrScaleKernel)
