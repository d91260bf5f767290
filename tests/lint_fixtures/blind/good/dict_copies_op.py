"""dict_copies: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class DictCopiesOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("DictCopies operator.")


class DictCopiesOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of dict_copies should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("dict_copies", DictCopiesOp, DictCopiesOpMaker)

@register_kernel("dict_copies")
def dict_copies_kernel(ctx):
    bufs = {name: ctx.input(name).astype("float64") for name in ("X",)}
    for key, val in bufs.items():
        val -= val.mean()
    ctx.set_output("Out", bufs["X"])
