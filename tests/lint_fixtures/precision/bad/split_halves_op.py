"""split_halves: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class SplitHalvesOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("SplitHalves operator.")


class SplitHalvesOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of split_halves should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("split_halves", SplitHalvesOp, SplitHalvesOpMaker)

def _halves(a):
    h = a.shape[0] // 2
    return a[:h], a[h:]


@register_kernel("split_halves")
def split_halves_kernel(ctx):
    lo, hi = _halves(ctx.input("X"))
    ctx.set_output("Out", hi)  # expect: OPK004
