"""array_read: Out = Array[I], Array a LoDTensorArray."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, register_operator,
                   register_kernel, enforce, errors)

from opkit.framework.device import to_device
from reference_ops._array_common import ARRAY_DTYPES, array_of, check_index_dims, read_index


class ArrayReadOpMaker(OpMaker):
    def make(self):
        self.add_input("Array", "(LoDTensorArray) The array to read from.")
        self.add_input("I", "(Tensor, int64) The position to read, shape [1]; it must be "
                       "less than the length of the array.")
        self.add_output("Out", "(LoDTensor) A copy of the tensor at position I, with its "
                        "LoD.")
        self.add_comment(r"""Array Read operator (Paddle's read_from_array).

Reads the tensor at position I of the LoDTensorArray:
$$Out = Array[I]$$
Out is a copy (it owns its buffer) and keeps the element's LoD.
""")


def _element(ctx, op):
    var = ctx.input_var("Array")
    name = ctx.input_names("Array")[0]
    array = array_of(var, name, "ArrayReadOp", create=False)
    i = read_index(ctx, "ArrayReadOp")
    enforce(i < len(array), errors.OutOfRange(
        "Input(I) = %d of ArrayReadOp is out of range: the array '%s' holds %d tensors.", i,
        name, len(array)))
    tensor = array[i]
    enforce(tensor.is_initialized(), errors.PreconditionNotMet(
        "ArrayReadOp: element %d of the array '%s' was never written.", i, name))
    return tensor


class ArrayReadOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("Array"), "Input(Array) of ArrayReadOp should not be null.")
        enforce(ctx.has_input("I"), "Input(I) of ArrayReadOp should not be null.")
        enforce(ctx.has_output("Out"), "Output(Out) of ArrayReadOp should not be null.")
        check_index_dims(ctx, "ArrayReadOp")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(_element(ctx, self).dtype, ctx.place)


register_operator("array_read", ArrayReadOp, ArrayReadOpMaker)


@register_kernel("array_read", place=("CPU", "GPU"), dtypes=ARRAY_DTYPES)
def array_read_kernel(ctx):
    tensor = _element(ctx, ctx.op)
    data = to_device(tensor.data, ctx.place)
    ctx.set_output("Out", ctx.xp.array(data, copy=True), lod=[list(lv) for lv in tensor.lod])
