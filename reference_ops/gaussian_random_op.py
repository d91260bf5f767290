"""gaussian_random: samples from N(mean, std^2)."""
import numpy as np

from opkit import (OpMaker, OperatorWithKernel, OpKernelType, register_operator,
                   register_kernel, enforce, errors)
from reference_ops._dtype import dtype_attr_converter
from reference_ops._tensor_attr import (add_shape_tensor_inputs, creation_shape,
                                         infer_creation_shape)
from reference_ops._extra import add_extra_attrs


class GaussianRandomOpMaker(OpMaker):
    def make(self):
        add_shape_tensor_inputs(self)
        self.add_output("Out", "(Tensor) Output matrix of gaussian random op.")
        self.add_attr("shape", "ints", "(list<int>, default []) The dimension of the random "
                      "tensor.",
                      default=[])
        self.add_attr("mean", "float", "(float, default 0.0) Mean of the random tensor."
                      ).set_default(0.0)
        self.add_attr("std", "float", "(float, default 1.0) Standard deviation of the random "
                      "tensor.").set_default(1.0)
        self.add_attr("seed", "int", "(int, default 0) Random seed; 0 means nondeterministic."
                      ).set_default(0)
        self.add_attr("dtype", "string", "(string, default float32) Output data type (Paddle's "
                      "VarType number is accepted too).").set_converter(
                          dtype_attr_converter).set_default("float32").in_set(
                          ["float32", "float64"])
        add_extra_attrs(self, "use_mkldnn")
        self.add_comment(r"""GaussianRandom operator.

Fills the output with values drawn independently from a normal distribution
$$Out \sim \mathcal{N}(mean, std^2)$$
A non-zero `seed` makes the result reproducible.
""")


class GaussianRandomOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_output("Out"), "Output(Out) of GaussianRandomOp should not be null.")
        std = ctx.attr("std")
        enforce(std >= 0, errors.InvalidArgument(
            "Attr(std) of gaussian_random should be non-negative, but received std = %s.", std))
        shape = infer_creation_shape(ctx, "gaussian_random")
        if shape is not None:
            ctx.set_output_dim("Out", shape)
        # the program's Out has the kernel's dtype (issue 36, law 1: `describe`)
        ctx.set_output_dtype("Out", ctx.attr("dtype"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(ctx.attr("dtype"), ctx.place)


register_operator("gaussian_random", GaussianRandomOp, GaussianRandomOpMaker)


@register_kernel("gaussian_random", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def gaussian_random_kernel(ctx):
    seed = int(ctx.attr("seed"))
    rng = np.random.default_rng(seed) if seed != 0 else np.random.default_rng()
    shape = creation_shape(ctx, "gaussian_random")
    out = rng.normal(ctx.attr("mean"), ctx.attr("std"), size=shape).astype(ctx.attr("dtype"))
    ctx.set_output("Out", ctx.xp.asarray(out))
