"""helper_register: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class HelperRegisterOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("HelperRegister operator.")


class HelperRegisterOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of helper_register should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("helper_register", HelperRegisterOp, HelperRegisterOpMaker)

def _register(op, fn):
    for dt in ("float32", "float64"):
        register_kernel(op, dtypes=dt)(fn)


def _kernel(ctx):
    x = ctx.input("X")
    x.sort()  # expect: OPK001
    ctx.set_output("Out", x.copy())


_register("helper_register", _kernel)
