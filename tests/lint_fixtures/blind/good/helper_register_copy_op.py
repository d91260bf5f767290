"""helper_register_copy: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class HelperRegisterCopyOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("HelperRegisterCopy operator.")


class HelperRegisterCopyOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of helper_register_copy should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("helper_register_copy", HelperRegisterCopyOp, HelperRegisterCopyOpMaker)

def _register(op, fn):
    for dt in ("float32", "float64"):
        register_kernel(op, dtypes=dt)(fn)


def _kernel(ctx):
    x = np.sort(ctx.input("X"))
    x[0] = 0
    ctx.set_output("Out", x)


_register("helper_register_copy", _kernel)
