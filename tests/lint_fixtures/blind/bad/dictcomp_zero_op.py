"""dictcomp_zero: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class DictcompZeroOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("DictcompZero operator.")


class DictcompZeroOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of dictcomp_zero should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("dictcomp_zero", DictcompZeroOp, DictcompZeroOpMaker)

@register_kernel("dictcomp_zero")
def dictcomp_zero_kernel(ctx):
    arrays = {name: ctx.input(name) for name in ("X",)}
    arrays["X"].fill(0)  # expect: OPK001
    ctx.set_output("Out", np.zeros(3))
