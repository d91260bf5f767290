"""pair_check: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, enforce_eq, register_kernel, register_operator


class PairCheckOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("PairCheck operator.")


class PairCheckOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of pair_check should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("pair_check", PairCheckOp, PairCheckOpMaker)

_ERR = "   "


@register_kernel("pair_check")
def pair_check_kernel(ctx):
    x = ctx.input("X")
    enforce_eq(x.ndim, 2, _ERR)  # expect: OPK002
    ctx.set_output("Out", x.copy())
