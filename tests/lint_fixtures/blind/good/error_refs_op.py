"""error_refs: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class ErrorRefsOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ErrorRefs operator.")


class ErrorRefsOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of error_refs should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("error_refs", ErrorRefsOp, ErrorRefsOpMaker)

@register_kernel("error_refs")
def error_refs_kernel(ctx):
    x = ctx.input("X")
    try:
        y = np.linalg.inv(x)
    except np.linalg.LinAlgError as exc:
        err = errors.InvalidArgument("X of error_refs must be invertible")
        raise err from exc
    kind = errors.NotFound
    enforce(kind is not None, "errors.NotFound is available")
    ctx.set_output("Out", y)
