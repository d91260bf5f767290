"""array_write: Out[I] = X, Out a LoDTensorArray (grown as needed)."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, LoDTensor, register_operator,
                   register_kernel, enforce)

from reference_ops._array_common import ARRAY_DTYPES, array_of, check_index_dims, read_index


class ArrayWriteOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(LoDTensor) The tensor written into the array.")
        self.add_input("I", "(Tensor, int64) The position to write, shape [1].")
        self.add_output("Out", "(LoDTensorArray) The array written to; it grows to I + 1 "
                        "elements when it is shorter (the new elements before I stay empty).")
        self.add_comment(r"""Array Write operator (Paddle's write_to_array).

Stores a copy of X (with its LoD) at position I of the LoDTensorArray Out:
$$Out[I] = X$$
When the array holds fewer than I + 1 tensors it is extended first; the
other elements are left as they are.
""")


class ArrayWriteOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of ArrayWriteOp should not be null.")
        enforce(ctx.has_input("I"), "Input(I) of ArrayWriteOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of ArrayWriteOp should not be null.")
        check_index_dims(ctx, "ArrayWriteOp")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


register_operator("array_write", ArrayWriteOp, ArrayWriteOpMaker)


@register_kernel("array_write", place=("CPU", "GPU"), dtypes=ARRAY_DTYPES)
def array_write_kernel(ctx):
    i = read_index(ctx, "ArrayWriteOp")
    x_t = ctx.input_tensor("X")
    x = ctx.input("X")
    var = ctx.output_var("Out")
    array = array_of(var, ctx.output_names("Out")[0], "ArrayWriteOp", create=True)
    while len(array) <= i:
        array.append(LoDTensor())
    array[i] = LoDTensor(ctx.xp.array(x, copy=True), [list(lv) for lv in x_t.lod], ctx.place)
