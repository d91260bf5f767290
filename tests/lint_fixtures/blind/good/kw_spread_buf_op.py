"""kw_spread_buf: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class KwSpreadBufOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("KwSpreadBuf operator.")


class KwSpreadBufOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of kw_spread_buf should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("kw_spread_buf", KwSpreadBufOp, KwSpreadBufOpMaker)

@register_kernel("kw_spread_buf")
def kw_spread_buf_kernel(ctx):
    x = ctx.input("X")
    buf = np.empty_like(x)
    opts = {"out": buf}
    np.multiply(x, 2.0, **opts)
    ctx.set_output("Out", buf)
