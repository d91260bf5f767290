"""lambda_clip: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class LambdaClipOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("LambdaClip operator.")


class LambdaClipOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of lambda_clip should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("lambda_clip", LambdaClipOp, LambdaClipOpMaker)

@register_kernel("lambda_clip")
def lambda_clip_kernel(ctx):
    lo, hi = ctx.attr("min"), ctx.attr("max")
    clip = lambda a: np.clip(a, lo, hi, out=a)  # expect: OPK001
    y = clip(ctx.input("X"))
    ctx.set_output("Out", y.copy())
