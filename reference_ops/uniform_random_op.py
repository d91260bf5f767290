"""uniform_random: samples from U(min, max)."""
import numpy as np

from opkit import (OpMaker, OperatorWithKernel, OpKernelType, register_operator,
                   register_kernel, enforce, errors)


class UniformRandomOpMaker(OpMaker):
    def make(self):
        self.add_output("Out", "(Tensor) The output tensor of uniform random op.")
        self.add_attr("shape", "ints", "(list<int>) The shape of the output tensor.")
        self.add_attr("min", "float", "(float, default -1.0) Minimum value of uniform random."
                      ).set_default(-1.0)
        self.add_attr("max", "float", "(float, default 1.0) Maximum value of uniform random."
                      ).set_default(1.0)
        self.add_attr("seed", "int", "(int, default 0) Random seed; 0 means a different "
                      "(nondeterministic) seed on every run.").set_default(0)
        self.add_attr("dtype", "string", "(string, default float32) Output data type."
                      ).set_default("float32").in_set(["float32", "float64"])
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
        shape = [int(d) for d in ctx.attr("shape")]
        for i, d in enumerate(shape):
            enforce(d >= 0, errors.InvalidArgument(
                "Attr(shape) of uniform_random should have non-negative dims, but shape[%d] = %d "
                "(shape %s).", i, d, shape))
        ctx.set_output_dim("Out", shape)

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(ctx.attr("dtype"), ctx.place)


register_operator("uniform_random", UniformRandomOp, UniformRandomOpMaker)


@register_kernel("uniform_random", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def uniform_random_kernel(ctx):
    seed = int(ctx.attr("seed"))
    rng = np.random.default_rng(seed) if seed != 0 else np.random.default_rng()
    shape = tuple(int(d) for d in ctx.attr("shape"))
    out = rng.uniform(ctx.attr("min"), ctx.attr("max"), size=shape).astype(ctx.attr("dtype"))
    ctx.set_output("Out", ctx.xp.asarray(out))
