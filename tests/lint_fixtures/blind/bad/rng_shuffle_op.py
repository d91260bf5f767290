"""rng_shuffle: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class RngShuffleOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("RngShuffle operator.")


class RngShuffleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of rng_shuffle should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("rng_shuffle", RngShuffleOp, RngShuffleOpMaker)

@register_kernel("rng_shuffle")
def rng_shuffle_kernel(ctx):
    x = ctx.input("X")
    rng = np.random.default_rng(ctx.attr("seed"))
    rng.shuffle(x)  # expect: OPK001
    ctx.set_output("Out", x.copy())
