"""imported_safe: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator
from oplib.rows import normalized_rows


class ImportedSafeOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ImportedSafe operator.")


class ImportedSafeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of imported_safe should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("imported_safe", ImportedSafeOp, ImportedSafeOpMaker)

@register_kernel("imported_safe")
def imported_safe_kernel(ctx):
    y = normalized_rows(ctx.input("X"))
    y *= ctx.attr("scale")
    ctx.set_output("Out", y)
