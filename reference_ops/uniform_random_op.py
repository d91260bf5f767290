"""uniform_random: samples from U(min, max)."""
import numpy as np

from opkit import (OpMaker, OperatorWithKernel, OpKernelType, register_operator,
                   register_kernel, enforce, errors)
from opkit.framework.tensor import SelectedRows
from reference_ops._dtype import dtype_attr_converter
from reference_ops._tensor_attr import (add_shape_tensor_inputs, creation_shape,
                                         infer_creation_shape)


class UniformRandomOpMaker(OpMaker):
    def make(self):
        add_shape_tensor_inputs(self)
        self.add_output("Out", "(Tensor) The output tensor of uniform random op.")
        self.add_attr("shape", "ints", "(list<int>, default []) The shape of the output tensor.",
                      default=[])
        self.add_attr("min", "float", "(float, default -1.0) Minimum value of uniform random."
                      ).set_default(-1.0)
        self.add_attr("max", "float", "(float, default 1.0) Maximum value of uniform random."
                      ).set_default(1.0)
        self.add_attr("seed", "int", "(int, default 0) Random seed; 0 means a different "
                      "(nondeterministic) seed on every run.").set_default(0)
        self.add_attr("dtype", "string", "(string, default float32) Output data type (Paddle's "
                      "VarType number is accepted too).").set_converter(
                          dtype_attr_converter).set_default("float32").in_set(
                          ["float32", "float64", "float16", "bfloat16"])
        self.add_attr("diag_num", "int", "(int, default 0) The number of diagonal elements "
                      "set to diag_val (position i * diag_step + i of the flattened output).",
                      default=0)
        self.add_attr("diag_step", "int", "(int, default 0) The step between two diagonal "
                      "elements.", default=0)
        self.add_attr("diag_val", "float", "(float, default 1.0) The value of the diagonal "
                      "elements.", default=1.0)
        self.add_comment(r"""UniformRandom operator.

Fills the output with values drawn independently from the uniform distribution
$$Out \sim U(min, max)$$
A non-zero `seed` makes the result reproducible.
""")


class UniformRandomOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_output("Out"), "Output(Out) of UniformRandomOp should not be null.")
        lo, hi = ctx.attr("min"), ctx.attr("max")
        enforce(lo < hi, errors.InvalidArgument(
            "uniform_random's min must be less than max, but received min = %s >= max = %s.",
            lo, hi))
        shape = infer_creation_shape(ctx, "uniform_random")
        if shape is not None:
            ctx.set_output_dim("Out", shape)
        # the program's Out has the kernel's dtype (issue 36, law 1: `describe`)
        ctx.set_output_dtype("Out", ctx.attr("dtype"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(ctx.attr("dtype"), ctx.place)


register_operator("uniform_random", UniformRandomOp, UniformRandomOpMaker)


@register_kernel("uniform_random", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def uniform_random_kernel(ctx):
    seed = int(ctx.attr("seed"))
    rng = np.random.default_rng(seed) if seed != 0 else np.random.default_rng()
    shape = creation_shape(ctx, "uniform_random")
    out = rng.uniform(ctx.attr("min"), ctx.attr("max"), size=shape).astype(ctx.attr("dtype"))
    diag_num, diag_step = int(ctx.attr("diag_num")), int(ctx.attr("diag_step"))
    if diag_num > 0:
        enforce(out.size > (diag_num - 1) * (diag_step + 1), errors.InvalidArgument(
            "uniform_random: diag_num %d and diag_step %d reach past the output's %d elements",
            diag_num, diag_step, out.size))
        flat = out.reshape(-1)
        flat[[i * diag_step + i for i in range(diag_num)]] = ctx.attr("diag_val")
    var = ctx.output_var("Out")
    rows = var.value() if var is not None else None
    if isinstance(rows, SelectedRows):     # as Paddle: Out a SelectedRows gets its value
        rows.value.set(ctx.xp.asarray(out), ctx.place)
        return
    ctx.set_output("Out", ctx.xp.asarray(out))
