"""lambda_new: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class LambdaNewOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("LambdaNew operator.")


class LambdaNewOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of lambda_new should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("lambda_new", LambdaNewOp, LambdaNewOpMaker)

@register_kernel("lambda_new")
def lambda_new_kernel(ctx):
    lo, hi = ctx.attr("min"), ctx.attr("max")
    clip = lambda a: np.clip(a, lo, hi)
    y = clip(ctx.input("X"))
    y += 1
    ctx.set_output("Out", y)
