"""method_norm: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class MethodNormOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("MethodNorm operator.")


class MethodNormOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of method_norm should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("method_norm", MethodNormOp, MethodNormOpMaker)

class MethodNormKernel:
    def _normalized(self, a):
        total = a.sum()
        return a / total

    def compute(self, ctx):
        y = self._normalized(ctx.input("X"))
        y -= y.mean()
        ctx.set_output("Out", y)


register_kernel("method_norm")(MethodNormKernel)
