"""relu_flat: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class ReluFlatOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ReluFlat operator.")


class ReluFlatOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of relu_flat should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("relu_flat", ReluFlatOp, ReluFlatOpMaker)

def _flatten(a):
    return a.reshape(-1)


def _prepare(ctx):
    return _flatten(ctx.input("X"))


@register_kernel("relu_flat")
def relu_flat_kernel(ctx):
    v = _prepare(ctx)
    v[v < 0] = 0  # expect: OPK001
    ctx.set_output("Out", v.copy())
