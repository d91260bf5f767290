"""scale_static: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class ScaleStaticOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ScaleStatic operator.")


class ScaleStaticOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of scale_static should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("scale_static", ScaleStaticOp, ScaleStaticOpMaker)

class ScaleStaticKernel:
    @staticmethod
    def _scale(a, s):
        a *= s  # expect: OPK001
        return a

    def compute(self, ctx):
        y = self._scale(ctx.input("X"), ctx.attr("scale"))
        ctx.set_output("Out", y + 0)


register_kernel("scale_static")(ScaleStaticKernel)
