"""rng_permute: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class RngPermuteOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("RngPermute operator.")


class RngPermuteOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of rng_permute should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("rng_permute", RngPermuteOp, RngPermuteOpMaker)

@register_kernel("rng_permute")
def rng_permute_kernel(ctx):
    x = ctx.input("X")
    rng = np.random.default_rng(ctx.attr("seed"))
    p = rng.permutation(x)
    idx = np.arange(x.shape[0])
    rng.shuffle(idx)
    p.sort()
    ctx.set_output("Out", p[idx])
