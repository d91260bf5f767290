# A deliberately bad op file: every rule fires once (see tests/lint/test_fixture.py).
# This folder is excluded from `opkit lint` in pyproject.toml.
import numpy as np
from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator, enforce


class ReluOpMaker(OpMaker):
    def make(self):
        self.add_input("x", "(Tensor) input")  # OPK007
        self.add_output("Out", "(Tensor) output")
                                                # OPK008: no add_comment


class ReluOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "")  # OPK002

    def get_expected_kernel_type(self, ctx):
        return ctx.input("X").dtype  # OPK005


register_operator("relu", ReluOp, ReluOpMaker)
register_operator("gelu", ReluOp)  # OPK006


@register_kernel("relu", dtypes="float32")  # OPK003
def relu_kernel(ctx):
    x = ctx.input("X")
    x[x < 0] = 0  # OPK001
    ctx.set_output("Out", x)  # OPK004
