"""kw_spread_out: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class KwSpreadOutOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("KwSpreadOut operator.")


class KwSpreadOutOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of kw_spread_out should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("kw_spread_out", KwSpreadOutOp, KwSpreadOutOpMaker)

@register_kernel("kw_spread_out")
def kw_spread_out_kernel(ctx):
    x = ctx.input("X")
    opts = {"out": x}
    np.multiply(x, 2.0, **opts)  # expect: OPK001
    ctx.set_output("Out", x.copy())
