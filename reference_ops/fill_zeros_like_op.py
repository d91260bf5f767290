"""fill_zeros_like: zeros of X's shape (the gradient of an output the loss does not use)."""
from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator


class FillZerosLikeOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The tensor whose shape and dtype Out takes.")
        self.add_output("Out", "(Tensor) Zeros of X's shape.")
        self.add_comment(r"FillZerosLike operator. $$Out = \mathbf{0}_{shape(X)}$$")


class FillZerosLikeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


register_operator("fill_zeros_like", FillZerosLikeOp, FillZerosLikeOpMaker,
                  no_need_buffer=["X"])

FILL_TYPES = ("float32", "float64", "int32", "int64")


@register_kernel("fill_zeros_like", place=("CPU", "GPU"), dtypes=FILL_TYPES)
def fill_zeros_like_kernel(ctx):
    x = ctx.input_tensor("X")
    ctx.set_output("Out", ctx.xp.zeros(x.shape, dtype=x.dtype))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, partial_sum, split  # noqa: E402

# each device fills its slice; zeros sum to zeros
register_sbp("fill_zeros_like", Signature({"X": split("i"), "Out": split("i")}, each="X"),
             Signature({"X": partial_sum, "Out": partial_sum}))
