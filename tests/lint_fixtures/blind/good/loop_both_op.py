"""loop_both: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class LoopBothOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("LoopBoth operator.")


class LoopBothOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of loop_both should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("loop_both", LoopBothOp, LoopBothOpMaker)

def loop_both_kernel(ctx):
    ctx.set_output("Out", ctx.input("X") * 2)


for _dt in ("float32", "float64"):
    register_kernel("loop_both", dtypes=_dt)(loop_both_kernel)
