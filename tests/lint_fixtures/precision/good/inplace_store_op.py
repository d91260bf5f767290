"""inplace_store: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class InplaceStoreOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("InplaceStore operator.")


class InplaceStoreOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of inplace_store should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("inplace_store", InplaceStoreOp, InplaceStoreOpMaker, inplace={"X": "Out"})

def _store(ctx, name, value):
    ctx.set_output(name, value)


@register_kernel("inplace_store")
def inplace_store_kernel(ctx):
    _store(ctx, "Out", ctx.input("X"))
