"""running_sum: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class RunningSumOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("RunningSum operator.")


class RunningSumOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of running_sum should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("running_sum", RunningSumOp, RunningSumOpMaker)

@register_kernel("running_sum")
def running_sum_kernel(ctx):
    x = ctx.input("X")
    (n,) = x.shape
    total = 0.0
    for i in range(n):
        v = x[i]
        v += total
        total = v
    ctx.set_output("Out", np.full(1, total, dtype=x.dtype))
