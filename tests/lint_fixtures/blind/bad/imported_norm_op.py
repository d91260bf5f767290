"""imported_norm: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator
from oplib.rows import normalize_rows


class ImportedNormOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ImportedNorm operator.")


class ImportedNormOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of imported_norm should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("imported_norm", ImportedNormOp, ImportedNormOpMaker)

@register_kernel("imported_norm")
def imported_norm_kernel(ctx):
    x = ctx.input("X")
    normalize_rows(x)  # expect: OPK001
    ctx.set_output("Out", x.copy())
