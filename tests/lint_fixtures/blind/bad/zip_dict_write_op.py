"""zip_dict_write: a blind-set op file for `opkit lint` (see tests/lint/test_blind.py)."""
import numpy as np
from opkit import OpMaker, OperatorWithKernel, enforce, errors, register_kernel, register_operator


class ZipDictWriteOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("ZipDictWrite operator.")


class ZipDictWriteOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of zip_dict_write should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("zip_dict_write", ZipDictWriteOp, ZipDictWriteOpMaker)

@register_kernel("zip_dict_write")
def zip_dict_write_kernel(ctx):
    names = ("A", "B")
    table = dict(zip(names, ctx.inputs("X")))
    table["A"][...] = 0  # expect: OPK001
    ctx.set_output("Out", np.zeros(3))
