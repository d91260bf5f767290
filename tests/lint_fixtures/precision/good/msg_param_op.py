"""msg_param: a precision-set op file for `opkit lint` (see tests/lint/test_precision.py)."""
from opkit import OpMaker, OperatorWithKernel, enforce, enforce_eq, register_kernel, register_operator


class MsgParamOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input")
        self.add_output("Out", "(Tensor) output")
        self.add_comment("MsgParam operator.")


class MsgParamOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of msg_param should not be null.")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    def get_expected_kernel_type(self, ctx):
        return self.indicate_var_data_type(ctx, "X")


register_operator("msg_param", MsgParamOp, MsgParamOpMaker)

msg = ""
_MSG = "Input(X) of msg_param must be a matrix."


def _check(ctx, msg):
    enforce(ctx.has_input("X"), msg)


@register_kernel("msg_param")
def msg_param_kernel(ctx):
    _check(ctx, "Input(X) of msg_param should not be null.")
    x = ctx.input("X")
    enforce_eq(x.ndim, 2, _MSG)
    ctx.set_output("Out", x * 1)
