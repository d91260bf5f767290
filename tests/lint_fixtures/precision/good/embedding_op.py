"""embedding: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, register_kernel, register_operator


class EmbeddingOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("Embedding operator.")


class EmbeddingOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of embedding should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("embedding", EmbeddingOp, EmbeddingOpMaker)

@register_kernel("embedding")
def embedding_kernel(ctx):
    w = ctx.input("X")
    ids = ctx.input("Ids")
    rows = w[ids]
    rows *= ctx.attr("scale")
    ctx.set_output("Out", rows)
