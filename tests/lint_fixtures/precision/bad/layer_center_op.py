"""layer_center: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class LayerCenterOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("LayerCenter operator.")


class LayerCenterOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of layer_center should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("layer_center", LayerCenterOp, LayerCenterOpMaker)

class LayerCenterKernel:
    def compute(self, ctx):
        x = ctx.input("X")
        n = x.shape[0]
        x2d = x.reshape(n, -1)
        self._center(x2d)
        ctx.set_output("Out", x2d.copy())

    def _center(self, a):
        mean = a.mean(axis=1, keepdims=True)
        a -= mean  # expect: OPK001


register_kernel("layer_center")(LayerCenterKernel)
