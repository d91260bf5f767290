"""dict_center: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class DictCenterOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("DictCenter operator.")


class DictCenterOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of dict_center should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("dict_center", DictCenterOp, DictCenterOpMaker)

@register_kernel("dict_center")
def dict_center_kernel(ctx):
    bufs = {"x": ctx.input("X"), "w": np.ones(3)}
    for key, val in bufs.items():
        val -= val.mean()  # expect: OPK001
    ctx.set_output("Out", np.zeros(3))
