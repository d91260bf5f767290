"""loop_inplace: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class LoopInplaceOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("LoopInplace operator.")


class LoopInplaceOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of loop_inplace should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("loop_inplace", LoopInplaceOp, LoopInplaceOpMaker, inplace={"X": "Out"})

def _identity(ctx):
    ctx.set_output("Out", ctx.input("X"))


for _dt in ("float32", "float64"):
    register_kernel("loop_inplace", dtypes=_dt)(_identity)
